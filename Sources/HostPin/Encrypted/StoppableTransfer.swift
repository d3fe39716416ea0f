import CCurl
import Synchronization

/// One easy handle's transfer run to its end on a multi handle of its own, as `curl_easy_perform` runs
/// it, except that ``stop()`` from another thread ends it within one turn: `curl_multi_wakeup` ends the
/// wait in `curl_multi_poll`, where `curl_easy_perform` offers no way in. For ``CertificateProbe``'s
/// threads and ``RankingProbe``'s, which ``CurlThreads`` must be able to stop.
final class StoppableTransfer: Sendable {
    private struct State {
        /// The multi handle while ``perform(_:)`` runs, as an address; nil before and after.
        var multiAddress: Int?
        var stopped = false
    }

    private let state = Mutex(State())

    /// Makes ``perform(_:)`` return `nil` soon (or at once, when it has not started); from any thread.
    func stop() {
        state.withLock { state in
            state.stopped = true
            // Under the lock: perform takes the address out here before it frees the multi handle.
            if let address = state.multiAddress { curl_multi_wakeup(UnsafeMutableRawPointer(bitPattern: address)) }
        }
    }

    /// Runs `easy` (set up, not on any multi handle) until its transfer ends. One call at a time; after
    /// ``stop()``, every call returns `nil` at once (``RankingProbe`` runs a name's handshakes one after
    /// another through one transfer, so one stop ends them all).
    ///
    /// - Returns: The transfer's result, as `curl_easy_perform` returns it; `nil` when ``stop()`` ended it.
    func perform(_ easy: UnsafeMutableRawPointer) -> CURLcode? {
        guard let multi = curl_multi_init() else { return CURLE_OUT_OF_MEMORY }
        let admitted = state.withLock { state in
            if !state.stopped { state.multiAddress = Int(bitPattern: multi) }
            return !state.stopped
        }
        var result: CURLcode?
        if admitted {
            let added = curl_multi_add_handle(multi, easy)
            result = added == CURLM_OK ? drive(easy, on: multi) : CURLE_OUT_OF_MEMORY
            if added == CURLM_OK { curl_multi_remove_handle(multi, easy) }
            state.withLock { $0.multiAddress = nil }
        }
        curl_multi_cleanup(multi)
        return result
    }

    private func drive(_ easy: UnsafeMutableRawPointer, on multi: UnsafeMutableRawPointer) -> CURLcode? {
        while !state.withLock({ $0.stopped }) {
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                if message.pointee.msg == CURLMSG_DONE, message.pointee.easy_handle == easy { return message.pointee.data.result }
            }
            // Until a socket is ready, curl's next timeout (CURLOPT_TIMEOUT_MS) or stop()'s wake-up.
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        return nil
    }
}
