import CCurl
import Synchronization

/// DNS over HTTPS (RFC 8484) to one upstream: each query a `POST` of `application/dns-message`
/// (§4.1), over HTTP/2 when the server offers it, every query multiplexed on one kept connection.
///
/// One curl multi handle carries every exchange, driven by a thread of this transport's own
/// (`curl_multi_poll`, woken by `curl_multi_wakeup`, the one multi call that is safe from any thread);
/// callers only queue work and await it. Replies are checked (see ``EncryptedTransportFailure``): HTTP
/// status 200, `application/dns-message`, 12 to 65 535 octets (reading stops at once past that).
/// Dropping the transport, or ``CurlThreads/shutDown(within:)``, fails what is still in flight with
/// `.transportClosed` and ends its thread.
public final class DoHTransport: EncryptedTransport {
    public let upstream: EncryptedUpstream
    private let book: ExchangeBook<DoHJob>
    private let counter = HandshakeCounter()

    /// Starts the transport's thread, one of `threads`; nothing is connected until the first exchange.
    init(upstream: EncryptedUpstream, path: String, threads: CurlThreads = .process) {
        self.upstream = upstream
        CurlLibrary.initialiseOnce()
        guard let multi = curl_multi_init() else {
            book = ExchangeBook(wake: {})
            book.close()  // out of memory: every exchange fails with .transportClosed
            return
        }
        let address = MultiAddress(multi)
        // The book calls wake only until the loop closes it, and the loop frees the multi handle after; a
        // multi handle replaced (closeConnections) is swapped under the book's lock and freed after it.
        book = ExchangeBook(wake: { curl_multi_wakeup(address.pointer) })
        let (book, counter) = (book, counter)
        let started = threads.start(name: "hostpin-doh \(upstream)", stop: { book.stop() }) {
            DoHLoop(multi: address, book: book, counter: counter, upstream: upstream, path: path).run()
        }
        if !started {
            // The process is exiting: no thread calls libcurl any more, so every exchange fails at once.
            book.close()
            curl_multi_cleanup(multi)
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
        return await book.exchange(DoHJob(query: query, timeout: timeout))
    }
}

/// One query handed to the DoH thread.
struct DoHJob: Sendable {
    let query: [UInt8]
    let timeout: Duration
}

/// The DoH thread's multi handle, which it replaces to close every kept connection at once (libcurl has
/// no call that closes a multi handle's cached connections but `curl_multi_cleanup`): written by that
/// thread under the ``ExchangeBook``'s lock, read by the book's wake-up under the same lock.
final class MultiAddress: Sendable {
    private let address: Atomic<Int>

    init(_ multi: UnsafeMutableRawPointer) {
        address = Atomic(Int(bitPattern: multi))
    }

    var pointer: UnsafeMutableRawPointer? { UnsafeMutableRawPointer(bitPattern: address.load(ordering: .acquiring)) }

    func replace(with multi: UnsafeMutableRawPointer) {
        address.store(Int(bitPattern: multi), ordering: .releasing)
    }
}
