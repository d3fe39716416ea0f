import Synchronization

/// Ranks a name's addresses by the connection times HostPin measured to them (issue 30, part 2), so that
/// Happy Eyeballs races the fastest first — without letting a hijacker win by answering fastest.
///
/// - Learnt per (address, port) from real connections, and for HTTPS only from connections whose TLS
///   handshake verified the name's certificate (the caller records nothing else): a sinkhole that
///   accepts at once but cannot show the certificate is never measured, it is ``exclude(_:port:for:)``d
///   for that name instead.
/// - A failure (a timeout, a refusal, a target that accepts and never speaks) ranks the address after
///   every address not known to fail.
/// - For a public name (not a special-use zone, ``SpecialUseName``), a special-purpose address (RFC 6890:
///   loopback, private, link-local, …) never ranks above a public one, however fast it answered: a
///   local black box answering for a public name is the hijack this guards against.
/// - Bounded: at most ``limit`` measured addresses and ``limit`` exclusions (10 000 each by default); a
///   full table forgets its oldest tenth. Every ranking expires ``lifetime`` (10 minutes) after it was
///   last learnt, and a network change drops them all (``removeAll()``): times measured on the old path
///   say nothing of the new one.
///
/// RFC 8305 §4 allows such history in the order of addresses; within each group the answer's order
/// breaks ties and places what was never measured. Safe from any thread; time on a ``MonotonicClock``.
public final class AddressRanking: Sendable {
    /// An address and the port connected to.
    public struct Endpoint: Sendable, Hashable {
        public let address: IPAddress
        public let port: UInt16

        public init(_ address: IPAddress, port: UInt16) {
            self.address = address
            self.port = port
        }
    }

    /// The pure state: no clock, no lock. Times are monotonic nanoseconds.
    struct State: Sendable {
        struct Measure: Sendable {
            /// Smoothed connection time (an exponential moving average, 1/4 weight to each new sample),
            /// nanoseconds; `nil` once the last attempt failed.
            var smoothed: UInt64?
            var learntAt: UInt64
        }

        struct Exclusion: Hashable, Sendable {
            var name: HostName
            var endpoint: Endpoint
        }

        let limit: Int
        let lifetime: UInt64
        private(set) var measures: [Endpoint: Measure] = [:]
        private(set) var exclusions: [Exclusion: UInt64] = [:]

        init(limit: Int, lifetime: UInt64) {
            self.limit = max(1, limit)
            self.lifetime = lifetime
        }

        mutating func record(_ time: UInt64, for endpoint: Endpoint, now: UInt64) {
            var measure = measures[endpoint].flatMap { now - min(now, $0.learntAt) < lifetime ? $0 : nil }
                ?? Measure(smoothed: nil, learntAt: now)
            measure.smoothed = measure.smoothed.map { ($0 * 3 + time) / 4 } ?? time
            measure.learntAt = now
            if measures[endpoint] == nil { makeRoom(&measures, now: now, at: \.learntAt) }
            measures[endpoint] = measure
        }

        mutating func recordFailure(of endpoint: Endpoint, now: UInt64) {
            if measures[endpoint] == nil { makeRoom(&measures, now: now, at: \.learntAt) }
            measures[endpoint] = Measure(smoothed: nil, learntAt: now)
        }

        mutating func exclude(_ endpoint: Endpoint, for name: HostName, now: UInt64) {
            let key = Exclusion(name: name, endpoint: endpoint)
            if exclusions[key] == nil { makeRoom(&exclusions, now: now, at: \.self) }
            exclusions[key] = now
        }

        func isExcluded(_ endpoint: Endpoint, for name: HostName, now: UInt64) -> Bool {
            guard let at = exclusions[Exclusion(name: name, endpoint: endpoint)] else { return false }
            return now - min(now, at) < lifetime
        }

        /// `addresses` (the answer's order) ranked for `name` at `port`, excluded ones left out.
        func order(_ addresses: [IPAddress], port: UInt16, for name: HostName, now: UInt64) -> [IPAddress] {
            let publicName = SpecialUseName.entry(containing: name.text) == nil
            // (group, rank, answer position): group 0 public (or any address for a special-use name), 1
            // special-purpose for a public name; rank 0 measured (by time), 1 never measured, 2 failed.
            var ranked: [(group: Int, rank: Int, time: UInt64, position: Int, address: IPAddress)] = []
            for (position, address) in addresses.enumerated() {
                let endpoint = Endpoint(address, port: port)
                if isExcluded(endpoint, for: name, now: now) { continue }
                let group = publicName && address.isSpecialPurpose ? 1 : 0
                let measure = measures[endpoint].flatMap { now - min(now, $0.learntAt) < lifetime ? $0 : nil }
                switch measure?.smoothed {
                case .some(let time): ranked.append((group, 0, time, position, address))
                case .none where measure != nil: ranked.append((group, 2, 0, position, address))
                case .none: ranked.append((group, 1, 0, position, address))
                }
            }
            ranked.sort { ($0.group, $0.rank, $0.time, $0.position) < ($1.group, $1.rank, $1.time, $1.position) }
            return ranked.map(\.address)
        }

        mutating func removeAll() {
            measures = [:]
            exclusions = [:]
        }

        /// With `table` full, drops what expired, else its oldest tenth.
        private func makeRoom<Key, Value>(_ table: inout [Key: Value], now: UInt64, at time: KeyPath<Value, UInt64>) {
            guard table.count >= limit else { return }
            table = table.filter { now - min(now, $0.value[keyPath: time]) < lifetime }
            guard table.count >= limit else { return }
            let oldest = table.sorted { $0.value[keyPath: time] < $1.value[keyPath: time] }.prefix(max(1, limit / 10))
            for (key, _) in oldest { table[key] = nil }
        }
    }

    /// The most measured addresses kept, and the most exclusions.
    public let limit: Int
    /// How long a measure or an exclusion holds after it was last learnt.
    public let lifetime: Duration
    private let clock: any MonotonicClock
    private let state: Mutex<State>

    /// - Parameters:
    ///   - limit: The most (address, port) measures kept, and the most (name, address, port) exclusions;
    ///     10 000 by default.
    ///   - lifetime: How long one holds; 10 minutes by default.
    ///   - clock: The monotonic clock times are read on.
    public init(limit: Int = 10_000, lifetime: Duration = .seconds(600), clock: any MonotonicClock = SystemMonotonicClock()) {
        self.limit = max(1, limit)
        self.lifetime = lifetime
        self.clock = clock
        state = Mutex(State(limit: limit, lifetime: lifetime.nanosecondsClampedAtZero))
    }

    /// Learns that a connection to `endpoint` took `time` (for HTTPS: to a verified handshake).
    public func record(_ time: Duration, to endpoint: Endpoint) {
        let now = clock.nanoseconds()
        state.withLock { $0.record(time.nanosecondsClampedAtZero, for: endpoint, now: now) }
    }

    /// Learns that a connection to `endpoint` failed (timed out, refused, never spoke): ranked last.
    public func recordFailure(to endpoint: Endpoint) {
        let now = clock.nanoseconds()
        state.withLock { $0.recordFailure(of: endpoint, now: now) }
    }

    /// Leaves `endpoint` out of `name`'s addresses: its TLS handshake failed the certificate check for
    /// `name` (a likely sinkhole, which the caller reports).
    public func exclude(_ endpoint: Endpoint, for name: HostName) {
        let now = clock.nanoseconds()
        state.withLock { $0.exclude(endpoint, for: name, now: now) }
    }

    /// `addresses`, in the answer's order, ranked for connecting to `name` at `port`: measured ones by
    /// time, then those never measured (answer order), then those that failed; public addresses before
    /// special-purpose ones for a public name; excluded ones left out (possibly all of them).
    public func order(_ addresses: [IPAddress], port: UInt16, for name: HostName) -> [IPAddress] {
        let now = clock.nanoseconds()
        return state.withLock { $0.order(addresses, port: port, for: name, now: now) }
    }

    /// Forgets every measure and exclusion (a network change).
    public func removeAll() {
        state.withLock { $0.removeAll() }
    }

    /// How many measures are kept (expired ones not yet dropped included).
    public var count: Int { state.withLock { $0.measures.count } }
}
