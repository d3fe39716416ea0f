import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The protocol instance's client, called from the resolver task, the inner session's delegate queue
/// and the curl thread — always through the task's own work queue.
///
/// FoundationNetworking's protocols call their client on that queue, and the client relies on it: it
/// reads the session's task registry, which that queue mutates (calls from the curl thread and from the
/// inner session's delegate queue both crashed under benchmark load). So every call runs there, in
/// order, and is dropped once ``stop()`` (which Foundation calls on that queue) has run.
///
/// @unchecked Sendable: `URLProtocol` is explicitly not Sendable. `lock` guards `stopped` and every use
/// of `owner`; `queue` itself never changes.
final class ClientReference: @unchecked Sendable {
    // Weak: the protocol instance owns its load, which owns this reference.
    private weak let owner: PinnedURLProtocol?
    private let queue: DispatchQueue
    private let lock = NSLock()
    private var stopped = false
    /// Body bytes handed to `queue` but not yet given to the client; guarded by `lock`.
    private var pendingBytes = 0
    /// Above this backlog a flow-controlled transport waits for the work queue.
    private static let backlogLimit = 1 << 20

    /// - Parameter queue: The task's work queue (found by reflection in `startLoading`, which runs on it);
    ///   a private serial queue when there is none.
    init(_ owner: PinnedURLProtocol, queue: DispatchQueue?) {
        self.owner = owner
        self.queue = queue ?? DispatchQueue(label: "hostpin.client")
    }

    /// Drops every call not yet made. Call on the work queue (Foundation calls `stopLoading` there).
    func stop() {
        lock.withLock { stopped = true }
    }

    private func call(_ body: @escaping @Sendable (PinnedURLProtocol, any URLProtocolClient) -> Void) {
        queue.async { [self] in run(body) }
    }

    private func run(_ body: (PinnedURLProtocol, any URLProtocolClient) -> Void) {
        lock.withLock {
            guard !stopped, let owner, let client = owner.client else { return }
            body(owner, client)
        }
    }

    func received(_ response: HTTPURLResponse) {
        call { $1.urlProtocol($0, didReceive: response, cacheStoragePolicy: .notAllowed) }
    }

    /// Hands `data` to the client on `queue`. With `flowControl` (the curl thread) the caller waits
    /// whenever more than ``backlogLimit`` bytes are still queued, so curl reads no faster than the client
    /// takes the data; without it (the inner URLSession: waiting there would only move the backlog into
    /// its delegate queue, as FoundationNetworking drives that transfer on the same work queue) it never waits.
    func loaded(_ data: Data, flowControl: Bool) {
        let backlog = lock.withLock {
            pendingBytes += data.count
            return pendingBytes
        }
        let deliver: @Sendable () -> Void = { [self] in
            lock.withLock { pendingBytes -= data.count }
            run { $1.urlProtocol($0, didLoad: data) }
        }
        if flowControl && backlog > Self.backlogLimit { queue.sync(execute: deliver) } else { queue.async(execute: deliver) }
    }

    func finished() {
        call { $1.urlProtocolDidFinishLoading($0) }
    }

    func failed(with error: URLError) {
        call { $1.urlProtocol($0, didFailWithError: error) }
    }
}
