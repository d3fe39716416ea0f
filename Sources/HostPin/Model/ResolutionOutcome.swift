import Foundation

/// How a resolution ended when it ended with an answer: addresses or a negative answer, and how many
/// seconds that answer may still be used. Failures (no upstream answered, the budget ran out, the task
/// was cancelled) are thrown instead.
///
/// ``HostResolver/resolveDetailed(_:family:)`` returns it; a DNS server reads it to write the answer
/// section (``Resolution``) or the authority section (``NegativeAnswer/soa``) with TTLs counted down on
/// the cache's monotonic clock.
public struct ResolutionOutcome: Sendable, Hashable {
    /// The answer itself.
    public enum Answer: Sendable, Hashable {
        /// Addresses.
        case addresses(Resolution)
        /// NXDOMAIN or NODATA.
        case negative(NegativeAnswer)
    }

    /// The answer.
    public let answer: Answer
    /// Seconds the answer may still be used, on the cache's monotonic clock: for an answer just
    /// received, its lifetime as the cache keeps it (TTL clamped; ``NegativeAnswer/ttl`` capped); for a
    /// cached one, what is left of it, rounded down; for a stale one the stale TTL (RFC 8767 §4); 0 for
    /// IP literals, `localhost`, and answers the cache does not keep.
    public let ttlLeft: UInt32
    /// Whole seconds since the answer was received, on the cache's monotonic clock: 0 for an answer just
    /// received, and for a stale one (whose records already carry the stale TTL). A record's TTL, as a
    /// cache downstream should count it, is its own TTL less `age`.
    public let age: UInt32

    public init(answer: Answer, ttlLeft: UInt32, age: UInt32) {
        self.answer = answer
        self.ttlLeft = ttlLeft
        self.age = age
    }

    /// Where the answer came from.
    public var source: Resolution.Source {
        switch answer {
        case .addresses(let resolution): resolution.source
        case .negative(let negative): negative.source
        }
    }

    /// The addresses, as ``HostResolver/resolve(_:family:)`` returns them.
    ///
    /// - Throws: ``NegativeAnswer/error`` for a negative answer: ``ResolutionError/nxdomain(_:)`` or
    ///   ``ResolutionError/nodata(_:_:)``.
    public func get() throws(ResolutionError) -> Resolution {
        switch answer {
        case .addresses(let resolution): resolution
        case .negative(let negative): throw negative.error
        }
    }
}

extension ResolutionOutcome {
    /// `resolution` as just received: `ttlLeft` its TTL, age 0.
    static func received(_ resolution: Resolution) -> ResolutionOutcome {
        ResolutionOutcome(answer: .addresses(resolution), ttlLeft: resolution.ttl, age: 0)
    }

    /// `negative` as just received: `ttlLeft` its negative-caching TTL, age 0.
    static func received(_ negative: NegativeAnswer) -> ResolutionOutcome {
        ResolutionOutcome(answer: .negative(negative), ttlLeft: negative.ttl, age: 0)
    }

    /// The answer made without a query: for an IP literal or `localhost` (``Resolution/literal(for:family:)``),
    /// its addresses of `family`, or NODATA when it has none; for a name of a special-use zone
    /// (``SpecialUseName``: `invalid`, `onion`, `local`, `home.arpa`, `resolver.arpa`, the RFC 6303 reverse
    /// zones) the zone's NXDOMAIN or NODATA with its synthetic SOA record, source
    /// ``Resolution/Source/specialUse``; `nil` for every other name. Every resolution asks this first, so
    /// none of these names reaches the cache or an upstream.
    static func literal(for name: HostName, family: AddressFamily) -> ResolutionOutcome? {
        literal(for: name, family: family, routing: nil)
    }

    /// ``literal(for:family:)``, except that a special-use name `routing` routes
    /// (``HostResolver/routesSpecialUse(_:)``) is not answered here: it goes to its route.
    static func literal(for name: HostName, family: AddressFamily, routing: (any HostResolver)?) -> ResolutionOutcome? {
        guard name.mayBeAnsweredLocally else { return nil }
        if let literal = Resolution.literal(for: name, family: family) {
            guard literal.addresses.isEmpty else { return .received(literal) }
            return .received(NegativeAnswer(name: name, family: family, kind: .nodata, cnames: [], soa: nil,
                                            upstream: nil, source: .literal, receivedAt: literal.receivedAt))
        }
        guard let special = SpecialUseName.entry(containing: name.text),
              let kind = special.negativeKind(for: name.text) else { return nil }
        if special.mayBeRouted, let routing, routing.routesSpecialUse(name) { return nil }
        return .received(NegativeAnswer(name: name, family: family, kind: kind, cnames: [], soa: special.soa,
                                        upstream: nil, source: .specialUse, receivedAt: Date()))
    }
}
