import Synchronization

/// What a forward proxy (`hostpin proxy`, `hostpin serve --listen`) did: requests by kind and status
/// code, client connections open and accepted, body bytes relayed each way, and the addresses its TLS
/// probes found to be likely sinkholes (README.md, "Metrics").
///
/// Status codes are a closed set (100–999, the three digits a status line may carry), so the request
/// family has at most 1 800 series, and in practice the few codes seen: never a label per host or URL.
/// Counting is one relaxed atomic increment. Thread-safe.
public final class ProxyMetrics: Sendable {
    /// What was asked.
    public enum RequestKind: Int, Sendable, CaseIterable {
        /// A plain-HTTP request (absolute-form), or a head the proxy could not read.
        case http
        /// A CONNECT tunnel, counted when it closes.
        case connect

        var label: String {
            switch self {
            case .http: "http"
            case .connect: "connect"
            }
        }
    }

    /// Which way body bytes went.
    public enum Direction: Int, Sendable, CaseIterable {
        /// From the client to the origin: request bodies, and a tunnel's bytes from the client.
        case toOrigin
        /// From the origin to the client: response bodies, and a tunnel's bytes from the origin.
        case toClient

        var label: String {
            switch self {
            case .toOrigin: "to_origin"
            case .toClient: "to_client"
            }
        }
    }

    /// The status codes counted: the three digits of a status line.
    static let codes = 100...999

    private let requests = AtomicCounters<1800>()
    private let bytes = AtomicCounters<2>()
    private let accepted = Atomic<UInt64>(0)
    private let open = Atomic<Int>(0)
    private let sinkholes = Atomic<UInt64>(0)

    /// Nothing counted yet.
    public init() {}

    /// Counts one request answered with `status` (a status outside 100–999 counts as 502: the proxy
    /// sends none).
    public func recordRequest(_ kind: RequestKind, status: Int) {
        requests.add(Self.index(kind, status: status))
    }

    /// The requests counted with `kind` and `status`.
    public func requests(_ kind: RequestKind, status: Int) -> UInt64 {
        requests[Self.index(kind, status: status)]
    }

    /// A client connection was admitted: it is open until ``connectionClosed()``.
    public func connectionOpened() {
        accepted.add(1, ordering: .relaxed)
        open.add(1, ordering: .relaxed)
    }

    /// An admitted client connection has closed.
    public func connectionClosed() {
        open.subtract(1, ordering: .relaxed)
    }

    /// Client connections admitted and not yet closed.
    public var openConnections: Int { open.load(ordering: .relaxed) }

    /// Client connections admitted since the start.
    public var acceptedConnections: UInt64 { accepted.load(ordering: .relaxed) }

    /// Counts `count` body bytes relayed in `direction`.
    public func addRelayed(_ count: Int, _ direction: Direction) {
        bytes.add(direction.rawValue, UInt64(count))
    }

    /// The body bytes relayed in `direction`.
    public func relayed(_ direction: Direction) -> UInt64 {
        bytes[direction.rawValue]
    }

    /// Counts one address newly excluded for a name because its TLS handshake failed the name's
    /// certificate check (a likely sinkhole; ``AddressRanking/exclude(_:for:at:)``).
    public func countSinkhole() {
        sinkholes.add(1, ordering: .relaxed)
    }

    /// The (name, address) pairs excluded as likely sinkholes since the start.
    public var sinkholeAddresses: UInt64 { sinkholes.load(ordering: .relaxed) }

    private static func index(_ kind: RequestKind, status: Int) -> Int {
        let code = codes.contains(status) ? status : 502
        return kind.rawValue * codes.count + (code - codes.lowerBound)
    }

    /// Writes the proxy's families; a request series appears once its count is above zero (the codes
    /// are too many to list them all).
    func write(into exposition: inout MetricsExposition) {
        let name = "hostpin_proxy_requests_total"
        exposition.family(name, .counter, help: "Requests answered by the proxy (CONNECT tunnels when they close), by kind and status code.")
        for kind in RequestKind.allCases {
            for code in Self.codes {
                let count = requests(kind, status: code)
                if count > 0 { exposition.sample(name, labels: [("kind", kind.label), ("code", String(code))], count) }
            }
        }
        exposition.family("hostpin_proxy_open_connections", .gauge, help: "Client connections the proxy holds open now.")
        exposition.sample("hostpin_proxy_open_connections", openConnections)
        exposition.family("hostpin_proxy_connections_total", .counter,
                          help: "Client connections admitted (those over the connection limit are answered 503 and not counted here).")
        exposition.sample("hostpin_proxy_connections_total", acceptedConnections)
        exposition.family("hostpin_proxy_relayed_bytes_total", .counter,
                          help: "Body bytes relayed between clients and origins (request and response bodies, tunnels), by direction.")
        for direction in Direction.allCases {
            exposition.sample("hostpin_proxy_relayed_bytes_total", labels: [("direction", direction.label)], relayed(direction))
        }
        exposition.family("hostpin_proxy_sinkhole_addresses_total", .counter,
                          help: "Addresses excluded for a name because their TLS handshake failed its certificate check (likely sinkholes).")
        exposition.sample("hostpin_proxy_sinkhole_addresses_total", sinkholeAddresses)
    }
}
