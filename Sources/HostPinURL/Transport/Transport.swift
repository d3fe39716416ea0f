import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin

/// Sends one request to one pinned address and reports what comes back, as it arrives.
protocol Transport: Sendable {
    /// Whether the transport's thread may wait for body deliveries queued on the task's work queue (true
    /// for curl: its flow control, once more than 1 MiB is queued) or only enqueues them (the inner
    /// URLSession, whose transfer FoundationNetworking drives on that same queue without flow control:
    /// waiting would only move the backlog). Client calls always run on the work queue: the client reads
    /// the session's task registry, which only that queue may touch (inline calls from the curl thread and
    /// from the inner session's delegate queue both crashed under benchmark load).
    var waitsForClient: Bool { get }

    /// Starts sending `request` to one of `addresses` (in the order to attempt them); events go to `sink`.
    /// The inner URLSession takes one IPv4 address; curl races several as Happy Eyeballs does, each next
    /// attempt after `attemptDelay` (RFC 8305 §5). With `reportsConnections`, the sink hears of each
    /// connection attempt and the response's address (for an observer); without, curl is asked nothing
    /// about them. With a `feed`, the transport records in it the connection's verified time and excludes
    /// an address whose certificate failed (curl does; the inner URLSession reports no connection time).
    func start(_ request: PinnedRequest, to addresses: [IPAddress], attemptDelay: Duration, reportsConnections: Bool,
               feed: RankingFeed?, sink: any TransferSink) -> any TransferHandle
}

/// Receives one transfer's events, in order: connection attempts, one response, data as it arrives,
/// then exactly one finish.
protocol TransferSink: Sendable {
    /// A connection attempt to `address` starts (only when the transfer reports connections).
    func attempting(_ address: IPAddress)
    /// The response head; `address` is where it came from, when the transfer reports connections.
    func received(_ response: HTTPURLResponse, from address: IPAddress?)
    func received(_ data: Data)
    /// `nil` on success, else why the transfer failed.
    func finished(with failure: TransferFailure?)
}

/// Why a transfer failed.
enum TransferFailure: Error, Sendable {
    /// No connection to the address could be made (refused, unreachable): another address may work.
    case connect(URLError)
    /// The TLS handshake with `address` failed the certificate check for the name: a likely sinkhole.
    /// No byte of the request was sent (it follows the handshake), so another address may be tried.
    case certificate(URLError, address: IPAddress)
    /// Anything else: the transfer is over.
    case transfer(URLError)

    var urlError: URLError {
        switch self {
        case .connect(let error), .certificate(let error, _), .transfer(let error): error
        }
    }
}

/// A running transfer.
protocol TransferHandle: Sendable {
    /// Stops the transfer; no event reaches the sink afterwards.
    func cancel()
}
