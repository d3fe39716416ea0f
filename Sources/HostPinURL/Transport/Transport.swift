import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one pinned request and reports what comes back, as it arrives.
protocol Transport: Sendable {
    /// Starts sending `request` (already pinned: IP host, `Host` header); events go to `sink`.
    func start(_ request: URLRequest, sink: any TransferSink) -> any TransferHandle
}

/// Receives one transfer's events, in order: one response, data as it arrives, then exactly one finish.
protocol TransferSink: Sendable {
    func received(_ response: HTTPURLResponse)
    func received(_ data: Data)
    /// `nil` on success; otherwise the transport's error (a `URLError` for network failures).
    func finished(with error: (any Error)?)
}

/// A running transfer.
protocol TransferHandle: Sendable {
    /// Stops the transfer; no event reaches the sink afterwards.
    func cancel()
}
