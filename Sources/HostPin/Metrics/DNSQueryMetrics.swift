/// What a DNS stub (`hostpin serve`) did with each message it received, counted by how it came, the type
/// asked and the outcome: `hostpin_dns_queries_total{transport, type, outcome}` (README.md, "Metrics").
///
/// Every label has a closed set of values, so the family has a fixed number of series (72) whatever
/// names are asked: never a label per name. Counting is one relaxed atomic increment, cheap enough for
/// the cache-hit path. Thread-safe.
public final class DNSQueryMetrics: Sendable {
    /// How the message came.
    public enum Transport: Int, Sendable, CaseIterable {
        case udp
        case tcp

        var label: String {
            switch self {
            case .udp: "udp"
            case .tcp: "tcp"
            }
        }
    }

    /// The type asked for.
    public enum QueryType: Int, Sendable, CaseIterable {
        /// A (IPv4 addresses).
        case a
        /// AAAA (IPv6 addresses).
        case aaaa
        /// Any other type, or a message whose question was never read (dropped, rate-limited, FORMERR).
        case other

        var label: String {
            switch self {
            case .a: "A"
            case .aaaa: "AAAA"
            case .other: "other"
            }
        }
    }

    /// What the stub answered, or why it did not.
    public enum Outcome: Int, Sendable, CaseIterable {
        /// NOERROR with records of the type asked.
        case answered
        /// NOERROR without them (RFC 2308 §2.2), a CNAME chain at most; for a forwarded type, an empty
        /// answer section.
        case nodata
        /// NXDOMAIN (RFC 2308 §2.1), a blocked name's included.
        case nxdomain
        /// SERVFAIL: no trusted upstream answered.
        case servfail
        /// REFUSED: a class other than IN, a zone transfer, a type with nowhere to forward it.
        case refused
        /// FORMERR: the query could not be read past its header.
        case formerr
        /// NOTIMP: an opcode other than QUERY.
        case notimp
        /// NOTAUTH: a query signed with TSIG, whose key the stub does not hold (RFC 8945 §5.2.1).
        case notauth
        /// BADVERS: an EDNS version other than 0 (RFC 6891 §6.1.3).
        case badvers
        /// No answer: shorter than a header, a response (QR set), or the stub stopped while resolving it.
        case dropped
        /// No answer: the client sent more UDP queries than its rate limit allows (`--allow-remote`).
        case rateLimited
        /// No answer: the stub was answering as many UDP queries as it may at once.
        case overloaded

        var label: String {
            switch self {
            case .answered: "answered"
            case .nodata: "nodata"
            case .nxdomain: "nxdomain"
            case .servfail: "servfail"
            case .refused: "refused"
            case .formerr: "formerr"
            case .notimp: "notimp"
            case .notauth: "notauth"
            case .badvers: "badvers"
            case .dropped: "dropped"
            case .rateLimited: "rate_limited"
            case .overloaded: "overloaded"
            }
        }
    }

    private static let transports = Transport.allCases.count
    private static let types = QueryType.allCases.count
    private static let outcomes = Outcome.allCases.count
    private let counts = AtomicCounters<72>()

    /// No message counted yet.
    public init() {
        precondition(Self.transports * Self.types * Self.outcomes == 72, "AtomicCounters<72> holds every series")
    }

    /// Counts one message.
    public func record(_ type: QueryType, _ outcome: Outcome, over transport: Transport) {
        counts.add(Self.index(type, outcome, transport))
    }

    /// The messages counted with these labels.
    public func count(_ type: QueryType, _ outcome: Outcome, over transport: Transport) -> UInt64 {
        counts[Self.index(type, outcome, transport)]
    }

    private static func index(_ type: QueryType, _ outcome: Outcome, _ transport: Transport) -> Int {
        (transport.rawValue * types + type.rawValue) * outcomes + outcome.rawValue
    }

    /// Writes the family, every series included (zeros too, so a rate over them starts at once).
    func write(into exposition: inout MetricsExposition) {
        let name = "hostpin_dns_queries_total"
        exposition.family(name, .counter, help: "DNS messages received by the stub, by transport, type asked and outcome.")
        for transport in Transport.allCases {
            for type in QueryType.allCases {
                for outcome in Outcome.allCases {
                    exposition.sample(name, labels: [("transport", transport.label), ("type", type.label), ("outcome", outcome.label)],
                                      count(type, outcome, over: transport))
                }
            }
        }
    }
}
