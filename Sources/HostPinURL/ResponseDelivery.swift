import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How response bytes must reach a task in swift-corelibs-foundation.
///
/// There, `URLProtocolClient.urlProtocol(_:didLoad:)` forwards each chunk to a session delegate, but
/// for a task created with a completion handler (`dataTask(with:completionHandler:)`, `data(for:)`) it
/// only *replaces* the data it will hand to the handler: a protocol that streams several chunks leaves
/// the handler with the last chunk alone. The built-in HTTP protocol avoids this by asking the session
/// for the task's behaviour, which is internal API. Buffering is always correct, only later and larger,
/// so HostPin streams only where a data delegate can receive the chunks: a task whose (public) `delegate`
/// is no `URLSessionDataDelegate` is buffered at once; otherwise HostPin reads the task's behaviour by
/// reflection, and buffers when reflection finds nothing (another Foundation layout).
enum ResponseDelivery: Sendable, Equatable {
    /// Hand each chunk to the client as it arrives (a session delegate receives the data).
    case stream
    /// Collect the body and hand it to the client once, before finishing.
    case buffer

    /// The delivery `task` needs. Call on FoundationNetworking's work queue (as `startLoading` is), where
    /// the session mutates its task registry.
    init(for task: URLSessionTask?) {
        // Without a data delegate no chunk reaches anyone before the end (a session without a delegate,
        // `data(for:)` with none): nothing to stream to, so no reflection per request.
        guard let task, task.delegate is URLSessionDataDelegate,
              let session = Reflection.child("session", of: task),
              let registry = Reflection.child("taskRegistry", of: session),
              let behaviours = Reflection.child("behaviours", of: registry) as? [Int: Any],
              let behaviour = behaviours[task.taskIdentifier]
        else {
            self = .buffer
            return
        }
        // `callDelegate` is the only behaviour in which didLoad reaches the delegate chunk by chunk.
        self = Reflection.isCase(behaviour, named: "callDelegate") ? .stream : .buffer
    }
}
