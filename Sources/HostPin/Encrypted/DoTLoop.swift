import CCurl
import Foundation

/// The DoT thread's state: queries waiting for a connection, the connection (being set up by libcurl,
/// or open), every exchange's deadline. Made and used on that thread only.
final class DoTLoop {
    /// Where the connection is in its life.
    private enum Connection {
        /// None: the next query starts one.
        case idle
        /// libcurl is connecting and verifying TLS (the transfer is on the multi handle).
        case connecting(UpstreamCurlHandle)
        /// Open: queries go out, replies come in.
        case open(DoTConnection)
    }

    private let multiAddress: Int
    private let wakePipe: WakePipe
    private let book: ExchangeBook<DoTJob>
    private let counter: HandshakeCounter
    private let upstream: EncryptedUpstream
    private var connection = Connection.idle
    /// Queries not yet handed to a connection, in arrival order.
    private var waiting: [(id: UInt64, query: [UInt8])] = []
    /// The deadline of every exchange still waiting for its reply, queued or in flight.
    private var deadlines: [UInt64: ContinuousClock.Instant] = [:]

    init(multiAddress: Int, wakePipe: WakePipe, book: ExchangeBook<DoTJob>, counter: HandshakeCounter, upstream: EncryptedUpstream) {
        self.multiAddress = multiAddress
        self.wakePipe = wakePipe
        self.book = book
        self.counter = counter
        self.upstream = upstream
    }

    private var multi: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: multiAddress)! }

    func run() {
        while true {
            let work = book.takeWork()
            if work.stopping { break }
            for (id, job) in work.submitted {
                waiting.append((id, job.query))
                deadlines[id] = job.deadline
            }
            for id in work.cancelled { forget(id) }
            if work.closingConnections { closeConnection() }
            expire(now: .now)
            step()
            wait()
        }
        // Stopping: no wake-up can come after close(), so the pipe and the multi handle may go.
        book.close()
        switch connection {
        case .idle: break
        case .connecting(let curl):
            curl_multi_remove_handle(multi, curl.raw)
            curl.close()
        case .open(let open):
            _ = open.close(from: multi)
        }
        curl_multi_cleanup(multi)
        wakePipe.close()
    }

    /// Drops a cancelled exchange: from the queue, or from the connection (its ID stays reserved).
    private func forget(_ id: UInt64) {
        deadlines[id] = nil
        if let index = waiting.firstIndex(where: { $0.id == id }) {
            waiting.remove(at: index)
        } else if case .open(let open) = connection {
            _ = open.abandon(id)
        }
    }

    /// Fails every exchange whose deadline has passed with `.timeout`; drops the connection when it
    /// stalled under one of them.
    private func expire(now: ContinuousClock.Instant) {
        var stalled = false
        for (id, deadline) in deadlines where deadline <= now {
            deadlines[id] = nil
            if let index = waiting.firstIndex(where: { $0.id == id }) {
                waiting.remove(at: index)
            } else if case .open(let open) = connection {
                stalled = open.abandon(id).stalled || stalled
            }
            book.finish(id, with: .failure(.timeout))
        }
        if stalled { drop(failing: .connectionStalled) }
    }

    /// Moves the connection on: reads what arrived, starts a connection for waiting queries, finishes
    /// setting one up, sends what waits.
    private func step() {
        // Read first: a close that already arrived sends what waits to a new connection instead.
        if case .open(let open) = connection, let failure = deliver(open.receive(now: .now)) {
            drop(failing: failure)
        }
        if case .idle = connection, !waiting.isEmpty { startConnecting() }
        if case .connecting(let curl) = connection {
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE else { continue }
                connected(curl, result: message.pointee.data.result)
            }
        }
        guard case .open(let open) = connection else { return }
        let now = ContinuousClock.now
        while let next = waiting.first, open.enqueue(next.query, for: next.id, now: now) { waiting.removeFirst() }
        if let failure = open.flush() { drop(failing: failure) }
    }

    private func startConnecting() {
        counter.add(1)
        let host = upstream.name.literalAddress?.uriHost ?? upstream.name.text
        guard let curl = UpstreamCurlHandle(upstream: upstream, url: "https://\(host):\(upstream.port)/") else {
            failWaiting(.transferFailed(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "libcurl could not create a handle"))
            return
        }
        // Connect and verify TLS, then hand the stream over (curl_easy_send/recv); no HTTP is spoken, so
        // no ALPN protocol is offered either.
        curl.set(CURLOPT_CONNECT_ONLY, 1)
        curl.set(CURLOPT_SSL_ENABLE_ALPN, 0)
        // As long as the most patient waiting query may wait; each one still times out on its own.
        let latest = waiting.compactMap { deadlines[$0.id] }.max() ?? .now
        curl.set(CURLOPT_CONNECTTIMEOUT_MS, max(1, ContinuousClock.now.duration(to: latest).millisecondsRoundedUp))
        guard curl.setupResult == CURLE_OK else {
            failWaiting(curl.failure(curl.setupResult))
            curl.close()
            return
        }
        let added = curl_multi_add_handle(multi, curl.raw)
        guard added == CURLM_OK else {
            curl.close()
            failWaiting(.transferFailed(code: Int(added.rawValue), message: String(cString: curl_multi_strerror(added))))
            return
        }
        connection = .connecting(curl)
    }

    /// The connect-only transfer ended: open, or failed (then every waiting query fails with why).
    private func connected(_ curl: UpstreamCurlHandle, result: CURLcode) {
        var socket: curl_socket_t = -1
        if result == CURLE_OK { hostpin_curl_getinfo_socket(curl.raw, CURLINFO_ACTIVESOCKET, &socket) }
        guard result == CURLE_OK, socket >= 0 else {
            let failure = result == CURLE_OK ? .connectionClosed : curl.failure(result)
            curl_multi_remove_handle(multi, curl.raw)
            curl.close()
            connection = .idle
            failWaiting(failure)
            return
        }
        // Kept on the multi handle while open: removing a connect-only transfer closes its connection.
        connection = .open(DoTConnection(curl: curl, socket: socket, now: .now))
    }

    /// Resumes the exchanges answered; passes on the receive failure.
    private func deliver(_ received: (replies: [(UInt64, [UInt8])], failure: EncryptedTransportFailure?))
        -> EncryptedTransportFailure?
    {
        for (id, reply) in received.replies {
            deadlines[id] = nil
            book.finish(id, with: .success(reply))
        }
        return received.failure
    }

    /// Ends the open connection, failing what was in flight on it with `failure`.
    private func drop(failing failure: EncryptedTransportFailure) {
        guard case .open(let open) = connection else { return }
        connection = .idle
        for id in open.close(from: multi) {
            deadlines[id] = nil
            book.finish(id, with: .failure(failure))
        }
    }

    /// Closes the connection, open or being set up (a network change): what was in flight on it fails
    /// with `.connectionClosed`; queries still waiting go to the next connection.
    private func closeConnection() {
        switch connection {
        case .idle: break
        case .connecting(let curl):
            curl_multi_remove_handle(multi, curl.raw)
            curl.close()
            connection = .idle
        case .open: drop(failing: .connectionClosed)
        }
    }

    private func failWaiting(_ failure: EncryptedTransportFailure) {
        for (id, _) in waiting {
            deadlines[id] = nil
            book.finish(id, with: .failure(failure))
        }
        waiting.removeAll()
    }

    /// Sleeps until the socket (or libcurl, while connecting) has work, a caller writes the wake pipe, or
    /// the nearest deadline.
    private func wait() {
        var timeout: Int32 = -1
        if case .idle = connection, !waiting.isEmpty {
            timeout = 0  // a send just failed with queries left: connect again at once
        } else if let nearest = deadlines.values.min() {
            timeout = Int32(clamping: ContinuousClock.now.duration(to: nearest).millisecondsRoundedUp)
        }
        switch connection {
        case .connecting:
            var extra = curl_waitfd(fd: wakePipe.readFD, events: Int16(CURL_WAIT_POLLIN), revents: 0)
            // curl_multi_poll takes no "forever": without a deadline, a long sleep that a wake-up ends.
            curl_multi_poll(multi, &extra, 1, timeout < 0 ? 60_000 : Int32(timeout), nil)
        case .idle:
            var fds = [pollfd(fd: wakePipe.readFD, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 1, timeout)
        case .open(let open):
            let events = POLLIN | (open.wantsToWrite ? POLLOUT : 0)
            var fds = [pollfd(fd: wakePipe.readFD, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: open.socket, events: Int16(events), revents: 0)]
            _ = poll(&fds, 2, timeout)
        }
        wakePipe.drain()
    }
}
