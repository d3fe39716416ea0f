import CCurl

/// The DoH thread's state: the multi handle and the exchanges on it. Made and used on that thread only.
final class DoHLoop {
    private let multiAddress: MultiAddress
    private let book: ExchangeBook<DoHJob>
    private let counter: HandshakeCounter
    private let upstream: EncryptedUpstream
    private let path: String
    private var exchanges: [UInt64: DoHExchange] = [:]

    init(multi multiAddress: MultiAddress, book: ExchangeBook<DoHJob>, counter: HandshakeCounter, upstream: EncryptedUpstream, path: String) {
        self.multiAddress = multiAddress
        self.book = book
        self.counter = counter
        self.upstream = upstream
        self.path = path
    }

    func run() {
        guard var multi = multiAddress.pointer else { return }
        while true {
            let work = book.takeWork()
            if work.stopping { break }
            if work.closingConnections, let fresh = closeConnections(of: multi) { multi = fresh }
            for (id, job) in work.submitted {
                switch DoHExchange.make(id: id, query: job.query, timeout: job.timeout, upstream: upstream, path: path) {
                case .success(let exchange):
                    let added = curl_multi_add_handle(multi, exchange.curl.raw)
                    guard added == CURLM_OK else {
                        exchange.curl.close()
                        let message = String(cString: curl_multi_strerror(added))
                        book.finish(id, with: .failure(.transferFailed(code: Int(added.rawValue), message: message)))
                        continue
                    }
                    exchanges[id] = exchange
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

    /// Closes every connection of `multi` (a network change): fails the exchanges in flight with
    /// `.connectionClosed`, puts a new multi handle in its place and frees it, which closes its cached
    /// connections. Returns the new handle; `nil` (nothing changed) when libcurl has no memory for one.
    private func closeConnections(of multi: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
        guard let fresh = curl_multi_init() else { return nil }
        for exchange in exchanges.values {
            counter.add(exchange.curl.connectionsOpened)
            curl_multi_remove_handle(multi, exchange.curl.raw)
            exchange.curl.close()
            book.finish(exchange.id, with: .failure(.connectionClosed))
        }
        exchanges.removeAll()
        book.whileWakeIsHeld { multiAddress.replace(with: fresh) }
        curl_multi_cleanup(multi)
        return fresh
    }
}
