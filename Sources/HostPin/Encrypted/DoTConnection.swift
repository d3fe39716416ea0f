import CCurl
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One open, verified DoT connection (RFC 7858 §3.4: kept open and reused), owned by the transport's
/// thread: the TLS stream libcurl set up (`CURLOPT_CONNECT_ONLY`), read and written with
/// `curl_easy_recv`/`curl_easy_send` without blocking, RFC 7766 framing, and the queries in flight.
final class DoTConnection {
    let curl: UpstreamCurlHandle
    /// The TCP socket under the TLS stream (`CURLINFO_ACTIVESOCKET`), for `poll(2)`.
    let socket: Int32
    private(set) var inFlight = DoTInFlight()
    /// When bytes last arrived (the connect, before any).
    private(set) var lastReceived: ContinuousClock.Instant
    private var reader = LengthPrefixedReader()
    /// Framed queries not yet handed to TLS.
    private var framed: [UInt8] = []
    /// The bytes being written, and how many went out. OpenSSL wants a write that returned "again"
    /// retried with the same buffer and length, so this array is not changed until it is all sent.
    private var writing: [UInt8] = []
    private var written = 0
    private var readBuffer = [UInt8](repeating: 0, count: 16_384)

    init(curl: UpstreamCurlHandle, socket: Int32, now: ContinuousClock.Instant) {
        self.curl = curl
        self.socket = socket
        self.lastReceived = now
        acknowledgeAtOnce()
    }

    /// Whether bytes wait for the socket to take them (poll for `POLLOUT`).
    var wantsToWrite: Bool { written < writing.count || !framed.isEmpty }

    /// Queues `query` for `exchange` under a wire ID of its own; `false` when every ID is taken.
    func enqueue(_ query: [UInt8], for exchange: UInt64, now: ContinuousClock.Instant) -> Bool {
        guard let wireID = inFlight.assign(exchange: exchange, originalID: MessageID.read(query), at: now) else { return false }
        var message = query
        MessageID.write(wireID, into: &message)
        framed += LengthPrefixedReader.frame(message)
        return true
    }

    /// Writes what the socket takes now; the failure when the connection broke.
    func flush() -> EncryptedTransportFailure? {
        while true {
            if written == writing.count {
                guard !framed.isEmpty else { return nil }
                swap(&writing, &framed)
                framed.removeAll(keepingCapacity: true)
                written = 0
            }
            var sent = 0
            let code = writing.withUnsafeBytes { bytes in
                curl_easy_send(curl.raw, bytes.baseAddress.map { $0 + written }, bytes.count - written, &sent)
            }
            if code == CURLE_AGAIN { return nil }
            guard code == CURLE_OK else { return curl.failure(code) }
            written += sent
        }
    }

    /// Reads what has arrived; returns the replies it completes (exchange, reply with the query's own
    /// ID) and the failure when the connection ended or broke.
    ///
    /// A reply whose ID matches no query on the connection is discarded: replies to queries that timed
    /// out or were cancelled arrive that way, legitimately, and cannot be confused with a later query
    /// (see ``DoTInFlight``).
    func receive(now: ContinuousClock.Instant) -> (replies: [(UInt64, [UInt8])], failure: EncryptedTransportFailure?) {
        var replies: [(UInt64, [UInt8])] = []
        while true {
            var count = 0
            let code = readBuffer.withUnsafeMutableBytes { curl_easy_recv(curl.raw, $0.baseAddress, $0.count, &count) }
            // Read until "again": OpenSSL may hold decrypted bytes that poll(2) cannot see.
            if code == CURLE_AGAIN { return (replies, nil) }
            guard code == CURLE_OK else { return (replies, curl.failure(code)) }
            guard count > 0 else { return (replies, reader.holdsPartialMessage ? .replyCutShort : .connectionClosed) }
            lastReceived = now
            acknowledgeAtOnce()
            for message in reader.append(readBuffer[..<count]) {
                // Too short to hold an ID, let alone a header: the stream is broken, not the one reply.
                guard message.count >= 12 else { return (replies, .replyTooShort(octets: message.count)) }
                guard let entry = inFlight.reply(to: MessageID.read(message)), let exchange = entry.exchange else { continue }
                var reply = message
                MessageID.write(entry.originalID, into: &reply)
                replies.append((exchange, reply))
            }
        }
    }

    /// Asks the kernel to acknowledge what arrives at once (`TCP_QUICKACK`, tcp(7)) rather than after
    /// the delayed-ACK timer. A server that writes one reply in two pieces with Nagle's algorithm on
    /// (Unbound does: the length prefix, then the message) sends the second only once the first is
    /// acknowledged, so every reply stalled up to 40 ms for a client waiting on it. The kernel leaves
    /// quick-ACK mode on its own, hence after every read.
    private func acknowledgeAtOnce() {
        var on: Int32 = 1
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_QUICKACK, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Forgets `exchange` (cancelled, timed out); returns whether the connection looks stalled for it:
    /// the server stopped inside a reply, or has sent nothing since this query went out. Then nothing
    /// more is worth waiting for on it.
    func abandon(_ exchange: UInt64) -> (found: Bool, stalled: Bool) {
        guard let sentAt = inFlight.abandon(exchange) else { return (false, false) }
        return (true, reader.holdsPartialMessage || lastReceived < sentAt)
    }

    /// Ends the connection: the exchanges still waiting on it.
    func close(from multi: UnsafeMutableRawPointer) -> [UInt64] {
        // Removing a connect-only transfer from its multi handle closes its connection.
        curl_multi_remove_handle(multi, curl.raw)
        curl.close()
        return inFlight.removeAll()
    }
}
