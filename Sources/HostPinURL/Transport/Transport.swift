import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin

/// Sends one request to one pinned address and reports what comes back, as it arrives.
protocol Transport: Sendable {
    /// Whether the protocol client is called right on the thread that delivers the transfer's events,
    /// instead of on the task's work queue (waiting for it, which is the flow control for curl).
    ///
    /// The inner URLSession says yes: FoundationNetworking drives the inner transfer on the same single
    /// work queue, with no flow control, so hopping there made a 100 MiB download pile up in memory
    /// (measured: 60-117 MiB of growth, against < 32 MiB inline). The price is that the client then
    /// reads the outer session's task registry off its queue, which Foundation does not lock; no crash
    /// was seen on this path, while the curl thread doing the same crashed once under load.
    var callsClientInline: Bool { get }

    /// Starts sending `request` to `address`; events go to `sink`.
    func start(_ request: PinnedRequest, to address: IPAddress, sink: any TransferSink) -> any TransferHandle
}

/// Receives one transfer's events, in order: one response, data as it arrives, then exactly one finish.
protocol TransferSink: Sendable {
    func received(_ response: HTTPURLResponse)
    func received(_ data: Data)
    /// `nil` on success, else why the transfer failed.
    func finished(with failure: TransferFailure?)
}

/// Why a transfer failed.
enum TransferFailure: Error, Sendable {
    /// No connection to the address could be made (refused, unreachable): another address may work.
    case connect(URLError)
    /// Anything else: the transfer is over.
    case transfer(URLError)

    var urlError: URLError {
        switch self {
        case .connect(let error), .transfer(let error): error
        }
    }
}

/// A running transfer.
protocol TransferHandle: Sendable {
    /// Stops the transfer; no event reaches the sink afterwards.
    func cancel()
}
