import CCurl

/// DNS over TLS (RFC 7858) to one upstream: one TLS connection kept open and reused (§3.4), several
/// queries in flight on it at once, replies matched to queries by message ID in whatever order they
/// come (RFC 7766 §6.2.1.1).
///
/// libcurl opens and verifies the connection (`CURLOPT_CONNECT_ONLY` on `https://NAME:PORT/`, with the
/// same TLS checks as DoH: the certificate verified against NAME, the extra CA, the pins, the bootstrap
/// addresses through `CURLOPT_RESOLVE`); the transport's own thread then reads and writes the TLS
/// stream without blocking, sleeping in `poll(2)` on its socket and a pipe that callers write to when
/// they hand over queries and cancellations.
///
/// A connection the server closes is replaced at the next query; queries in flight on it fail with
/// `.connectionClosed`. When a query times out while the server stopped inside a reply, or sent
/// nothing at all since that query, the connection is dropped and what was in flight on it fails with
/// `.connectionStalled`. Dropping the transport, or ``CurlThreads/shutDown(within:)``, fails what is
/// still in flight with `.transportClosed` and ends its thread.
public final class DoTTransport: EncryptedTransport {
    public let upstream: EncryptedUpstream
    private let book: ExchangeBook<DoTJob>
    private let counter = HandshakeCounter()

    /// Starts the transport's thread, one of `threads`; nothing is connected until the first exchange.
    init(upstream: EncryptedUpstream, threads: CurlThreads = .process) {
        self.upstream = upstream
        CurlLibrary.initialiseOnce()
        guard let wakePipe = WakePipe.make(), let multi = curl_multi_init() else {
            book = ExchangeBook(wake: {})
            book.close()  // out of descriptors or memory: every exchange fails with .transportClosed
            return
        }
        // The book calls wake only until the loop closes it, and the loop closes the pipe after.
        book = ExchangeBook(wake: { wakePipe.wake() })
        let (book, counter, multiAddress) = (book, counter, Int(bitPattern: multi))
        let started = threads.start(name: "hostpin-dot \(upstream)", stop: { book.stop() }) {
            DoTLoop(multiAddress: multiAddress, wakePipe: wakePipe, book: book, counter: counter, upstream: upstream).run()
        }
        if !started {
            // The process is exiting: no thread calls libcurl any more, so every exchange fails at once.
            book.close()
            curl_multi_cleanup(multi)
            wakePipe.close()
        }
    }

    deinit {
        book.stop()
    }

    public var handshakes: Int { counter.value }

    public func closeConnections() {
        book.closeConnections()
    }

    public func exchange(_ query: [UInt8], timeout: Duration) async -> EncryptedExchangeResult {
        if let refusal = upstream.refusal(of: query) { return .failure(refusal) }
        return await book.exchange(DoTJob(query: query, deadline: .now + timeout))
    }
}

/// One query handed to the DoT thread.
struct DoTJob: Sendable {
    let query: [UInt8]
    let deadline: ContinuousClock.Instant
}
