import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A data delegate that records what arrives and hands it over when the task completes. With
/// `keepingData: false` it only counts, so a large download is not held by the test itself.
final class DataCollector: NSObject, URLSessionDataDelegate, Sendable {
    struct Result: Sendable {
        var response: URLResponse?
        /// The chunks as delivered; empty unless the collector keeps data.
        var chunks: [Data] = []
        var bytes = 0
        var chunkCount = 0
        var error: (any Error)?
    }

    private struct State {
        var result = Result()
        var waiter: CheckedContinuation<Result, Never>?
        var done = false
    }

    private let keepingData: Bool
    private let state = Mutex(State())

    init(keepingData: Bool = true) {
        self.keepingData = keepingData
    }

    /// Waits for the task to complete.
    func result() async -> Result {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Result? in
                if state.done { return state.result }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        state.withLock { $0.result.response = response }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        state.withLock { state in
            if keepingData { state.result.chunks.append(data) }
            state.result.bytes += data.count
            state.result.chunkCount += 1
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (result, waiter) = state.withLock { state in
            state.result.error = error
            state.done = true
            defer { state.waiter = nil }
            return (state.result, state.waiter)
        }
        waiter?.resume(returning: result)
    }
}
