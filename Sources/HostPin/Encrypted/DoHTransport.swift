import CCurl
import Foundation

/// DNS over HTTPS (RFC 8484) to one upstream: each query a `POST` of `application/dns-message`
/// (§4.1), over HTTP/2 when the server offers it, every query multiplexed on one kept connection.
///
/// One curl multi handle carries every exchange, driven by a thread of this transport's own
/// (`curl_multi_poll`, woken by `curl_multi_wakeup`, the one multi call that is safe from any thread);
/// callers only queue work and await it. Replies are checked (see ``EncryptedTransportFailure``): HTTP
/// status 200, `application/dns-message`, 12 to 65 535 octets (reading stops at once past that).
/// Dropping the transport fails what is still in flight with `.transportClosed` and ends its thread.
public final class DoHTransport: EncryptedTransport {
    public let upstream: EncryptedUpstream
    private let book: ExchangeBook<DoHJob>
    private let counter = HandshakeCounter()

    /// Starts the transport's thread; nothing is connected until the first exchange.
    init(upstream: EncryptedUpstream, path: String) {
        self.upstream = upstream
        CurlLibrary.initialiseOnce()
        guard let multi = curl_multi_init() else {
            book = ExchangeBook(wake: {})
            book.close()  // out of memory: every exchange fails with .transportClosed
            return
        }
        let address = Int(bitPattern: multi)
        // The book calls wake only until the loop closes it, and the loop frees the multi handle after.
        book = ExchangeBook(wake: { curl_multi_wakeup(UnsafeMutableRawPointer(bitPattern: address)) })
        let (book, counter) = (book, counter)
        let thread = Thread {
            DoHLoop(multiAddress: address, book: book, counter: counter, upstream: upstream, path: path).run()
        }
        thread.name = "hostpin-doh \(upstream)"
        thread.start()
    }

    deinit {
        book.stop()
    }

    public var handshakes: Int { counter.value }

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

/// The DoH thread's state: the multi handle and the exchanges on it. Made and used on that thread only.
final class DoHLoop {
    private let multiAddress: Int
    private let book: ExchangeBook<DoHJob>
    private let counter: HandshakeCounter
    private let upstream: EncryptedUpstream
    private let path: String
    private var exchanges: [UInt64: DoHExchange] = [:]

    init(multiAddress: Int, book: ExchangeBook<DoHJob>, counter: HandshakeCounter, upstream: EncryptedUpstream, path: String) {
        self.multiAddress = multiAddress
        self.book = book
        self.counter = counter
        self.upstream = upstream
        self.path = path
    }

    func run() {
        guard let multi = UnsafeMutableRawPointer(bitPattern: multiAddress) else { return }
        while true {
            let work = book.takeWork()
            if work.stopping { break }
            for (id, job) in work.submitted {
                switch DoHExchange.make(id: id, query: job.query, timeout: job.timeout, upstream: upstream, path: path) {
                case .success(let exchange):
                    exchanges[id] = exchange
                    curl_multi_add_handle(multi, exchange.curl.raw)
                case .failure(let failure):
                    book.finish(id, with: .failure(failure))
                }
            }
            for id in work.cancelled {
                guard let exchange = exchanges.removeValue(forKey: id) else { continue }
                counter.add(exchange.curl.connectionsOpened)
                curl_multi_remove_handle(multi, exchange.curl.raw)
                exchange.curl.close()
            }

            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
                let code = message.pointee.data.result
                curl_multi_remove_handle(multi, handle)
                guard let exchange = exchanges.removeValue(forKey: DoHExchange.id(of: handle)) else { continue }
                counter.add(exchange.curl.connectionsOpened)
                book.finish(exchange.id, with: exchange.result(code))
                exchange.curl.close()
            }
            // Sleeps until a socket is ready, one of curl's timers is due, or curl_multi_wakeup.
            curl_multi_poll(multi, nil, 0, 60_000, nil)
        }
        // Stopping: no wake-up can come after close(), so the multi handle may go.
        book.close()
        for exchange in exchanges.values {
            curl_multi_remove_handle(multi, exchange.curl.raw)
            exchange.curl.close()
        }
        exchanges.removeAll()
        curl_multi_cleanup(multi)
    }
}
