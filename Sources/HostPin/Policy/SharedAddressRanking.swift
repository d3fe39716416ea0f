import Synchronization

/// The one ``AddressRanking`` that the connections of a proxy or an interceptor configuration (and the
/// service around them) learn into and order by, behind a lock. Each call holds the lock for one
/// dictionary operation per address; nothing runs under it but the ranking's own code.
public final class SharedAddressRanking: Sendable {
    private let ranking: Mutex<AddressRanking>

    /// - Parameters:
    ///   - capacity: The most measured endpoints and, apart, excluded (name, address) pairs kept;
    ///     ``AddressRanking/defaultCapacity`` (10 000) by default.
    ///   - lifetime: How long an entry lasts after its last write; ``AddressRanking/defaultLifetime``
    ///     (10 minutes) by default.
    public init(capacity: Int = AddressRanking.defaultCapacity, lifetime: Duration = AddressRanking.defaultLifetime) {
        ranking = Mutex(AddressRanking(capacity: capacity, lifetime: lifetime))
    }

    /// A copy of the ranking as it stands (for tests and status pages).
    public var snapshot: AddressRanking { ranking.withLock { $0 } }

    /// ``AddressRanking/record(_:to:port:at:)`` under the lock.
    public func record(_ time: Duration, to address: IPAddress, port: UInt16, at now: ContinuousClock.Instant = .now) {
        ranking.withLock { $0.record(time, to: address, port: port, at: now) }
    }

    /// ``AddressRanking/exclude(_:for:at:)`` under the lock.
    ///
    /// - Returns: `true` when `address` was not excluded for `name` already.
    @discardableResult
    public func exclude(_ address: IPAddress, for name: String, at now: ContinuousClock.Instant = .now) -> Bool {
        ranking.withLock { $0.exclude(address, for: name, at: now) }
    }

    /// ``AddressRanking/isExcluded(_:for:at:)`` under the lock.
    public func isExcluded(_ address: IPAddress, for name: String, at now: ContinuousClock.Instant = .now) -> Bool {
        ranking.withLock { $0.isExcluded(address, for: name, at: now) }
    }

    /// Whether one of `addresses` has no connection time on `port` at `now` (a probe would tell).
    public func lacksTime(for addresses: [IPAddress], port: UInt16, at now: ContinuousClock.Instant = .now) -> Bool {
        ranking.withLock { ranking in addresses.contains { ranking.smoothedTime(to: $0, port: port, at: now) == nil } }
    }

    /// `addresses` ranked (``AddressRanking/order(_:for:port:at:)``) and then put in Happy Eyeballs order
    /// (RFC 8305 §4): the preferred family is the top-ranked address's when it was measured, else
    /// `happyEyeballs`' own; each family keeps the ranked order, and the special-purpose addresses of a
    /// public name stay after the public ones.
    ///
    /// When every address is excluded for `name`, all of them come back in `happyEyeballs`' order: a
    /// name whose every address is a sinkhole then fails its certificate check again, which says why,
    /// rather than having no address at all.
    ///
    /// - Returns: The addresses to attempt, in order; empty only when `addresses` is.
    public func attemptOrder(_ addresses: [IPAddress], for name: String, port: UInt16, happyEyeballs: HappyEyeballs,
                             at now: ContinuousClock.Instant = .now) -> [IPAddress] {
        // One address has one order, excluded or not (see above): no lock on the common path.
        guard addresses.count > 1 else { return addresses }
        let (ordered, family) = ranking.withLock { ranking in
            let ordered = ranking.order(addresses, for: name, port: port, at: now)
            return (ordered, ranking.preferredFamily(of: ordered, port: port, at: now))
        }
        guard !ordered.isEmpty else { return happyEyeballs.order(addresses) }
        let racing = family.map { HappyEyeballs(preferredFamily: $0, attemptDelay: happyEyeballs.attemptDelay) } ?? happyEyeballs
        // Interleaving the families must not lift a special-purpose address above a public one: the two
        // parts the ranking made are interleaved apart.
        guard let split = ordered.firstIndex(where: \.isSpecialPurpose), split > 0,
              SpecialUseName.entry(containing: name) == nil else { return racing.order(ordered) }
        return racing.order(Array(ordered[..<split])) + racing.order(Array(ordered[split...]))
    }

    /// ``AddressRanking/removeAll()`` under the lock (the network changed).
    public func removeAll() {
        ranking.withLock { $0.removeAll() }
    }
}
