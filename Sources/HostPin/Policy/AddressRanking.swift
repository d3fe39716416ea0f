/// What HostPin learnt about a name's addresses from real connections, and the order it tries them in
/// because of it (RFC 8305 §4 lets a client sort by such history before Happy Eyeballs interleaves the
/// families): the fastest verified address first, addresses never measured after the measured ones in
/// answer order, and addresses excluded for the name — their TLS handshake failed the name's certificate
/// check, a likely sinkhole — not at all. An address never measured is not raced ahead of a measured one
/// (it may be a black hole); ``RankingProbe`` measures it in the background instead, so one slow address
/// measured first does not stay ahead of a faster one never tried.
///
/// Only what was verified counts: a sample is the time a connection took to be usable, and for HTTPS
/// callers record it only after the certificate check for the name passed. A black box on the local
/// network answers fastest; with that rule it cannot win. For the same reason a special-purpose address
/// (``IPAddress/isSpecialPurpose``: loopback, private, …) never comes before a public one for a public
/// name, however fast it is.
///
/// Bounded: at most ``capacity`` measured (address, port) pairs and as many excluded (name, address)
/// pairs, the one written longest ago dropped first; each expires ``lifetime`` after its last write.
/// ``removeAll()`` forgets everything (on a network change the old path's times mean nothing).
///
/// Pure: no clock, no lock; the owner passes the time in (``SharedAddressRanking`` is the locked one the
/// resolver's users share).
public struct AddressRanking: Sendable {
    /// One destination whose connection time is measured.
    public struct Endpoint: Sendable, Hashable {
        public let address: IPAddress
        public let port: UInt16

        public init(address: IPAddress, port: UInt16) {
            self.address = address
            self.port = port
        }
    }

    private struct Exclusion: Sendable, Hashable {
        let name: String
        let address: IPAddress
    }

    /// The most measured endpoints (and, apart, the most exclusions) kept: 10 000 by default.
    public static let defaultCapacity = 10_000
    /// How long a measurement or an exclusion lasts after it was last written: 10 minutes by default.
    public static let defaultLifetime = Duration.seconds(600)

    private var times: RecencyTable<Endpoint, Duration>
    private var exclusions: RecencyTable<Exclusion, Void>

    /// - Parameters:
    ///   - capacity: The most measured endpoints kept, and apart the most (name, address) exclusions;
    ///     at least 1, ``defaultCapacity`` by default.
    ///   - lifetime: How long an entry lasts after its last sample or exclusion; ``defaultLifetime`` by
    ///     default.
    public init(capacity: Int = defaultCapacity, lifetime: Duration = defaultLifetime) {
        times = RecencyTable(capacity: capacity, lifetime: lifetime)
        exclusions = RecencyTable(capacity: capacity, lifetime: lifetime)
    }

    /// The most entries of each kind kept.
    public var capacity: Int { times.capacity }
    /// How long an entry lasts after its last write.
    public var lifetime: Duration { times.lifetime }
    /// How many endpoints have a measurement, expired ones not yet dropped included.
    public var measuredCount: Int { times.count }

    /// Counts one connection to `address`:`port` that took `time` to be usable (TCP connected, and for
    /// TLS the handshake done with the certificate verified for the name), measured at `now`.
    ///
    /// The smoothed time is RFC 6298 §2's SRTT with α = 1/8: the first sample is taken as it is, each
    /// later one moves it by an eighth of the difference (SRTT ← 7/8 SRTT + 1/8 sample). A measurement
    /// expired by `now` starts afresh.
    public mutating func record(_ time: Duration, to address: IPAddress, port: UInt16, at now: ContinuousClock.Instant) {
        let sample = max(time, .zero)
        times.update(Endpoint(address: address, port: port), at: now) { smoothed in
            guard let smoothed else { return sample }
            return (smoothed * 7 + sample) / 8
        }
    }

    /// The smoothed connection time to `address`:`port` at `now`; `nil` when never measured or expired.
    public func smoothedTime(to address: IPAddress, port: UInt16, at now: ContinuousClock.Instant) -> Duration? {
        times.value(for: Endpoint(address: address, port: port), at: now)
    }

    /// Excludes `address` for `name` from `now` on (for ``lifetime``): its TLS handshake failed the
    /// certificate check for `name`. Other names with the same address are not affected.
    ///
    /// - Parameter name: The normalised host name (``HostName/description``).
    /// - Returns: `true` when `address` was not excluded for `name` already (a new finding, to report).
    @discardableResult
    public mutating func exclude(_ address: IPAddress, for name: String, at now: ContinuousClock.Instant) -> Bool {
        let isNew = !isExcluded(address, for: name, at: now)
        exclusions.update(Exclusion(name: name, address: address), at: now) { _ in () }
        return isNew
    }

    /// Whether `address` is excluded for `name` at `now`.
    public func isExcluded(_ address: IPAddress, for name: String, at now: ContinuousClock.Instant) -> Bool {
        exclusions.value(for: Exclusion(name: name, address: address), at: now) != nil
    }

    /// `addresses` of `name` in the order to try them on `port` at `now`: those excluded for `name`
    /// removed; for a public name (any not under a ``SpecialUseName`` zone) the public addresses first
    /// and the special-purpose ones after them, when both kinds are there; within each part the measured
    /// ones fastest first (equal times in answer order), then the unmeasured ones in answer order.
    ///
    /// - Parameters:
    ///   - addresses: The answer's addresses, in answer order.
    ///   - name: The normalised host name (``HostName/description``).
    ///   - port: The port the connection goes to.
    ///   - now: The time to judge expiry by.
    /// - Returns: A subset of `addresses`; empty when every address is excluded.
    public func order(_ addresses: [IPAddress], for name: String, port: UInt16, at now: ContinuousClock.Instant) -> [IPAddress] {
        let kept = addresses.filter { !isExcluded($0, for: name, at: now) }
        // The name's zone is looked up only for an answer that mixes both kinds (the table costs more).
        guard kept.contains(where: { $0.isSpecialPurpose }), kept.contains(where: { !$0.isSpecialPurpose }),
              SpecialUseName.entry(containing: name) == nil
        else { return ranked(kept, port: port, at: now) }
        return ranked(kept.filter { !$0.isSpecialPurpose }, port: port, at: now)
            + ranked(kept.filter(\.isSpecialPurpose), port: port, at: now)
    }

    /// The family Happy Eyeballs should try first for an ``order(_:for:port:at:)`` result: the first
    /// address's when it was measured on `port` at `now`; `nil` (keep the default) otherwise.
    public func preferredFamily(of ordered: [IPAddress], port: UInt16, at now: ContinuousClock.Instant) -> IPAddress.Family? {
        guard let first = ordered.first, smoothedTime(to: first, port: port, at: now) != nil else { return nil }
        return first.family
    }

    /// Forgets every measurement and exclusion (the network changed).
    public mutating func removeAll() {
        times.removeAll()
        exclusions.removeAll()
    }

    private func ranked(_ addresses: [IPAddress], port: UInt16, at now: ContinuousClock.Instant) -> [IPAddress] {
        var measured: [(address: IPAddress, time: Duration, position: Int)] = []
        var unmeasured: [IPAddress] = []
        for (position, address) in addresses.enumerated() {
            if let time = smoothedTime(to: address, port: port, at: now) {
                measured.append((address, time, position))
            } else {
                unmeasured.append(address)
            }
        }
        measured.sort { ($0.time, $0.position) < ($1.time, $1.position) }
        return measured.map(\.address) + unmeasured
    }
}
