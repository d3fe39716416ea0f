import CAres
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The state that lives on a channel's owner thread: the c-ares channel and the sockets it asked us to
/// watch. Created on the thread that makes the ``AresChannel``, then used and destroyed only on the
/// channel's owner thread.
final class AresEventLoop {
    struct Settings: Sendable {
        /// `IP:PORT` of the one server to query; `nil` for the system's configured servers.
        let serverList: String?
        let timeoutMilliseconds: Int32
        let tries: Int
        let useTCP: Bool
    }

    private var channel: ares_channel?
    /// fd → (wants read, wants write), from `ARES_OPT_SOCK_STATE_CB`.
    private var sockets: [Int32: (read: Bool, write: Bool)] = [:]
    /// The owner thread's rounds: the callbacks of one wake-up run inside one.
    let round = AresRound()

    /// Creates the channel. Its socket-state callback refers to this object, so the channel must not
    /// outlive it: ``run(_:)`` or ``close()`` destroys it.
    ///
    /// - Throws: ``ResolutionError/setupFailed(_:)`` with c-ares's message.
    init(_ settings: Settings) throws(ResolutionError) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        let status = hostpin_ares_init_channel(
            &channel, settings.timeoutMilliseconds, Int32(clamping: settings.tries), settings.useTCP ? 1 : 0,
            Int32(AddressQuery.udpPayloadSize),
            { context, fd, readable, writable in
                guard let context else { return }
                Unmanaged<AresEventLoop>.fromOpaque(context).takeUnretainedValue()
                    .socketStateChanged(fd, read: readable != 0, write: writable != 0)
            },
            context)
        guard status == HOSTPIN_ARES_SUCCESS else { throw .setupFailed(AresStatus(code: status).description) }
        if let server = settings.serverList {
            // ares_set_servers_ports_csv honours ports; ares_set_servers_csv ignores them on 1.18.
            let status = ares_set_servers_ports_csv(channel, server)
            guard status == HOSTPIN_ARES_SUCCESS else {
                close()
                throw .setupFailed("server \(server): \(AresStatus(code: status))")
            }
        }
    }

    /// The owner thread's body: serve until stopped, then destroy the channel and fail what is queued.
    func run(_ inbox: Inbox) {
        serve(inbox)
        round.run {
            close()
            let (exchanges, blocks) = inbox.drain()
            for exchange in exchanges { exchange.cancel() }
            for block in blocks { block.cancel() }
        }
    }

    /// Destroys the channel, which runs every outstanding callback with ARES_EDESTRUCTION.
    func close() {
        guard let channel else { return }
        self.channel = nil
        ares_destroy(channel)
    }

    private func socketStateChanged(_ fd: Int32, read: Bool, write: Bool) {
        if read || write {
            sockets[fd] = (read, write)
        } else {
            sockets[fd] = nil
        }
    }

    private func serve(_ inbox: Inbox) {
        let wakeFD = inbox.wakeFD
        var fds: [pollfd] = []
        var batch: [PendingExchange] = []
        var blocks: [AresQueryBlock] = []
        var polled = false
        var stopping = false
        while true {
            // One round: the replies and timeouts the last poll found, then everything submitted, including
            // what their callbacks submitted (this thread's submits do not write the eventfd).
            round.run {
                if polled { process(fds) }
                while true {
                    guard inbox.take(into: &batch, blocks: &blocks) else { return stopping = true }
                    if batch.isEmpty && blocks.isEmpty { return }
                    for exchange in batch { send(exchange) }
                    for block in blocks { send(block) }
                }
            }
            if stopping { return }

            fds.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
            for (fd, interest) in sockets {
                let events = (interest.read ? POLLIN : 0) | (interest.write ? POLLOUT : 0)
                fds.append(pollfd(fd: fd, events: Int16(events), revents: 0))
            }
            let ready = poll(&fds, nfds_t(fds.count), nextTimeoutMilliseconds())
            if ready < 0 && errno != EINTR { return }
            polled = true

            if fds[0].revents != 0 {
                var counter: UInt64 = 0
                _ = Glibc.read(wakeFD, &counter, MemoryLayout<UInt64>.size)
            }
        }
    }

    /// Lets c-ares read and write the sockets `fds` (after the eventfd, at index 0) found ready.
    private func process(_ fds: [pollfd]) {
        var processed = false
        for entry in fds.dropFirst() where entry.revents != 0 {
            let failed = entry.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0
            let readable = entry.revents & Int16(POLLIN) != 0 || failed
            let writable = entry.revents & Int16(POLLOUT) != 0
            ares_process_fd(channel, readable ? entry.fd : HOSTPIN_ARES_SOCKET_BAD,
                            writable ? entry.fd : HOSTPIN_ARES_SOCKET_BAD)
            processed = true
        }
        // With no socket ready, this call still runs c-ares's timeout processing (retries, failover).
        if !processed { ares_process_fd(channel, HOSTPIN_ARES_SOCKET_BAD, HOSTPIN_ARES_SOCKET_BAD) }
    }

    /// c-ares's next deadline in ms, or -1 (sleep until woken) with nothing in flight.
    private func nextTimeoutMilliseconds() -> Int32 {
        var storage = timeval()
        guard let next = ares_timeout(channel, nil, &storage) else { return -1 }
        let millis = Int(next.pointee.tv_sec) * 1000 + (Int(next.pointee.tv_usec) + 999) / 1000
        return Int32(clamping: millis)
    }

    private func send(_ exchange: PendingExchange) {
        for (index, query) in exchange.queries.enumerated() {
            let context = Unmanaged.passRetained(QueryTicket(exchange: exchange, index: index)).toOpaque()
            query.withUnsafeBufferPointer { query in
                hostpin_ares_send(channel, query.baseAddress, Int32(clamping: query.count), { context, status, _, reply, length in
                    guard let context else { return }
                    let ticket = Unmanaged<QueryTicket>.fromOpaque(context).takeRetainedValue()
                    ticket.exchange.finish(ticket.index, with: AresEventLoop.outcome(AresStatus(code: status), reply, length))
                }, context)
            }
        }
    }

    /// Sends each query of `block`; its context pointer is the query's slot in one ``SentBlock``, which
    /// lives until the last of the block's callbacks has run.
    private func send(_ block: AresQueryBlock) {
        guard !block.queries.isEmpty else { return }
        let sent = SentBlock(block)
        _ = Unmanaged.passRetained(sent)
        for (index, query) in block.queries.enumerated() {
            let slot = sent.slots + index
            slot.initialize(to: SentBlock.Slot(sent: sent, index: index))
            query.withUnsafeBufferPointer { query in
                hostpin_ares_send(channel, query.baseAddress, Int32(clamping: query.count), { context, status, _, reply, length in
                    guard let slot = context?.assumingMemoryBound(to: SentBlock.Slot.self) else { return }
                    let sent = slot.pointee.sent
                    let outcome = AresEventLoop.outcome(AresStatus(code: status), reply, length)
                    if sent.finish(slot.pointee.index, with: outcome) { Unmanaged.passUnretained(sent).release() }
                }, UnsafeMutableRawPointer(slot))
            }
        }
    }

    /// What an `ares_send` callback reports; the reply is copied, c-ares frees it when the callback returns.
    private static func outcome(_ status: AresStatus, _ reply: UnsafeMutablePointer<UInt8>?, _ length: Int32)
        -> ExchangeOutcome
    {
        switch status.meaning {
        case .success:
            guard let reply, length > 0 else { return .failed(.badResponse) }
            return .reply(Array(UnsafeBufferPointer(start: reply, count: Int(length))))
        case .upstreamFailure(let reason):
            return .failed(reason)
        case .cancelled:
            return .cancelled
        }
    }
}

/// Which query of an exchange an `ares_send` callback completes: its `void *arg`.
private final class QueryTicket {
    let exchange: PendingExchange
    let index: Int

    init(exchange: PendingExchange, index: Int) {
        self.exchange = exchange
        self.index = index
    }
}
