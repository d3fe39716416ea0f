import CCurl
import Foundation
import HostPin
import Synchronization

/// A curl multi handle and the thread that drives it. Other threads only queue work and wake it with
/// `curl_multi_wakeup`, the one multi call that is safe from any thread; every other curl call happens
/// on the multi thread.
///
/// The thread is one of ``CurlThreads``: when the process shuts them down, transfers in flight and those
/// submitted later fail with `URLError.cancelled`, and the multi handle is freed.
final class CurlMulti: Sendable {
    private struct Inbox {
        var nextID = 1
        var jobs: [(Int, CurlJob)] = []
        var cancelled: [Int] = []
        /// Set by ``CurlThreads``' stop: the thread frees everything and ends.
        var stopping = false
        /// Close the kept connections once no transfer is in flight (a network change).
        var closingConnections = false
        /// Set by the thread as it ends (or when it could not start): the multi handle is freed or about
        /// to be, so nothing wakes it any more, and new jobs fail at once.
        var closed = false
    }

    private let inbox = Mutex(Inbox())
    /// The multi handle, as an address: a plain integer is Sendable, and only the multi thread
    /// dereferences it (plus `curl_multi_wakeup`, under the inbox's lock, until it is closed). The thread
    /// replaces it, under the inbox's lock, to close every kept connection (``closeConnections()``).
    private let multiAddress: Atomic<Int>

    /// Starts the multi thread, one of `threads`.
    init(threads: CurlThreads = .process) {
        CurlLibrary.initialiseOnce()
        let multi = curl_multi_init()
        multiAddress = Atomic(Int(bitPattern: multi))
        guard let multi else {
            inbox.withLock { $0.closed = true }  // out of memory: every job fails at once
            return
        }
        let started = threads.start(name: "hostpin-curl", stop: { [self] in stop() }) { [self] in run() }
        if !started {
            inbox.withLock { $0.closed = true }
            curl_multi_cleanup(multi)
        }
    }

    /// Queues `job`; returns its id for ``cancel(_:)``. Once the thread has stopped, `job` fails at once.
    func submit(_ job: CurlJob) -> Int {
        let (id, accepted) = inbox.withLock { inbox in
            defer { inbox.nextID += 1 }
            guard !inbox.closed else { return (inbox.nextID, false) }
            inbox.jobs.append((inbox.nextID, job))
            wake()
            return (inbox.nextID, true)
        }
        if !accepted { job.sink.finished(with: Self.stopped(job)) }
        return id
    }

    /// Stops transfer `id`; its sink hears nothing more.
    func cancel(_ id: Int) {
        inbox.withLock { inbox in
            guard !inbox.closed else { return }
            inbox.cancelled.append(id)
            wake()
        }
    }

    /// Closes the kept connections (a network change: they were made on the old path) as soon as no
    /// transfer is in flight: libcurl closes a multi handle's cached connections only with the handle, so
    /// the thread puts a new one in its place then. Transfers in flight meanwhile finish on theirs (a
    /// reused connection that turns out dead is retried by curl on a fresh one).
    func closeConnections() {
        inbox.withLock { inbox in
            guard !inbox.closed else { return }
            inbox.closingConnections = true
            wake()
        }
    }

    /// ``CurlThreads``' stop: the thread fails what it holds and ends.
    private func stop() {
        inbox.withLock { inbox in
            guard !inbox.closed else { return }
            inbox.stopping = true
            wake()
        }
    }

    /// Wakes the thread; call under the inbox's lock, before it is closed.
    private func wake() {
        curl_multi_wakeup(UnsafeMutableRawPointer(bitPattern: multiAddress.load(ordering: .relaxed)))
    }

    /// The failure of a transfer that the stopped thread will not carry.
    private static func stopped(_ job: CurlJob) -> TransferFailure {
        .transfer(URLError(.cancelled, url: job.request.url, description: "HostPin's libcurl threads have stopped: the process is exiting"))
    }

    private func run() {
        guard var multi = UnsafeMutableRawPointer(bitPattern: multiAddress.load(ordering: .relaxed)) else { return }
        var transfers: [Int: CurlEasy] = [:]
        while true {
            if transfers.isEmpty, let fresh = replaceIfClosing(multi) { multi = fresh }
            let (jobs, cancelled, stopping) = inbox.withLock { inbox in
                defer {
                    inbox.jobs.removeAll(keepingCapacity: true)
                    inbox.cancelled.removeAll(keepingCapacity: true)
                    if inbox.stopping { inbox.closed = true }
                }
                return (inbox.jobs, inbox.cancelled, inbox.stopping)
            }
            if stopping {
                // Closed: nothing wakes the handle any more, and later jobs fail in submit. A cancelled
                // transfer's sink hears nothing, as ever.
                for easy in transfers.values {
                    curl_multi_remove_handle(multi, easy.handle)
                    easy.close()
                }
                curl_multi_cleanup(multi)
                let dropped = Set(cancelled)
                let unfinished = transfers.map { ($0.key, $0.value.job) } + jobs
                for (id, job) in unfinished where !dropped.contains(id) { job.sink.finished(with: Self.stopped(job)) }
                return
            }
            for (id, job) in jobs {
                switch CurlEasy.make(id: id, job: job) {
                case .success(let easy):
                    transfers[id] = easy
                    curl_multi_add_handle(multi, easy.handle)
                case .failure(let failure):
                    job.sink.finished(with: failure)
                }
            }
            for id in cancelled {
                guard let easy = transfers.removeValue(forKey: id) else { continue }
                curl_multi_remove_handle(multi, easy.handle)
                easy.close()
            }

            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
                let result = message.pointee.data.result
                let id = CurlEasy.id(of: handle)
                curl_multi_remove_handle(multi, handle)
                if let easy = transfers.removeValue(forKey: id) {
                    easy.finish(result)
                    easy.close()
                }
            }
            // Sleeps until a socket is ready, curl's own next timeout is due, or curl_multi_wakeup.
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
    }

    /// With ``closeConnections()`` asked for (and no transfer in flight): a new multi handle in place of
    /// `multi`, swapped under the inbox's lock so no wake-up reaches the old one, which is then freed with
    /// its connections. `nil` when nothing was asked, or libcurl has no memory for a new handle.
    private func replaceIfClosing(_ multi: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
        guard inbox.withLock({ $0.closingConnections && !$0.closed }), let fresh = curl_multi_init() else { return nil }
        inbox.withLock { inbox in
            inbox.closingConnections = false
            multiAddress.store(Int(bitPattern: fresh), ordering: .relaxed)
        }
        curl_multi_cleanup(multi)
        return fresh
    }
}
