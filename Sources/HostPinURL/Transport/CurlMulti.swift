import CCurl
import Foundation
import Synchronization

/// A curl multi handle and the thread that drives it. Other threads only queue work and wake it with
/// `curl_multi_wakeup`, the one multi call that is safe from any thread; every other curl call happens
/// on the multi thread.
final class CurlMulti: Sendable {
    private struct Inbox {
        var nextID = 1
        var jobs: [(Int, CurlJob)] = []
        var cancelled: [Int] = []
    }

    private let inbox = Mutex(Inbox())
    /// The multi handle, as an address: a plain integer is Sendable, and only the multi thread
    /// dereferences it (plus `curl_multi_wakeup`).
    private let multiAddress: Int

    init() {
        CurlLibrary.initialiseOnce()
        multiAddress = Int(bitPattern: curl_multi_init())
        let thread = Thread { [self] in run() }
        thread.name = "hostpin-curl"
        thread.start()
    }

    /// Queues `job`; returns its id for ``cancel(_:)``.
    func submit(_ job: CurlJob) -> Int {
        let id = inbox.withLock { inbox in
            defer { inbox.nextID += 1 }
            inbox.jobs.append((inbox.nextID, job))
            return inbox.nextID
        }
        curl_multi_wakeup(UnsafeMutableRawPointer(bitPattern: multiAddress))
        return id
    }

    /// Stops transfer `id`; its sink hears nothing more.
    func cancel(_ id: Int) {
        inbox.withLock { $0.cancelled.append(id) }
        curl_multi_wakeup(UnsafeMutableRawPointer(bitPattern: multiAddress))
    }

    private func run() {
        guard let multi = UnsafeMutableRawPointer(bitPattern: multiAddress) else { return }
        var transfers: [Int: CurlEasy] = [:]
        while true {
            let (jobs, cancelled) = inbox.withLock { inbox in
                defer {
                    inbox.jobs.removeAll(keepingCapacity: true)
                    inbox.cancelled.removeAll(keepingCapacity: true)
                }
                return (inbox.jobs, inbox.cancelled)
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
}
