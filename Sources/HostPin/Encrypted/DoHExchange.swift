import CCurl
import Foundation

/// One DNS over HTTPS exchange (RFC 8484 §4.1): a `POST` of the query as `application/dns-message`, the
/// reply read into memory and checked. Owned by the transport's thread: made, driven and closed there,
/// its callbacks run there.
final class DoHExchange {
    /// The exchange's id in the transport's ``ExchangeBook``, also stored in `CURLOPT_PRIVATE`.
    let id: UInt64
    let curl: UpstreamCurlHandle
    private var body: [UInt8] = []
    /// Set when the body outgrew a DNS message and the write callback stopped the transfer.
    private var tooLong = false

    /// The largest DNS message: its length travels in 16 bits (RFC 1035 §4.2.2, RFC 8484 §6).
    static let maximumMessageLength = 65_535

    /// An easy handle for `query`, or why none can be made.
    static func make(id: UInt64, query: [UInt8], timeout: Duration, upstream: EncryptedUpstream, path: String)
        -> Result<DoHExchange, EncryptedTransportFailure>
    {
        let url = "https://\(upstream.name.literalAddress?.uriHost ?? upstream.name.text):\(upstream.port)\(path)"
        guard let curl = UpstreamCurlHandle(upstream: upstream, url: url) else {
            return .failure(.transferFailed(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "libcurl could not create a handle"))
        }
        let exchange = DoHExchange(id: id, curl: curl)
        exchange.configure(query: query, timeout: timeout)
        guard curl.setupResult == CURLE_OK else {
            let failure = curl.failure(curl.setupResult)
            curl.close()
            return .failure(failure)
        }
        return .success(exchange)
    }

    private init(id: UInt64, curl: UpstreamCurlHandle) {
        self.id = id
        self.curl = curl
    }

    /// The exchange id stored in `handle`'s `CURLOPT_PRIVATE`.
    static func id(of handle: UnsafeMutableRawPointer) -> UInt64 {
        var pointer: UnsafeMutableRawPointer?
        hostpin_curl_getinfo_pointer(handle, CURLINFO_PRIVATE, &pointer)
        return UInt64(UInt(bitPattern: pointer))
    }

    private func configure(query: [UInt8], timeout: Duration) {
        curl.set(CURLOPT_PRIVATE, pointer: UnsafeRawPointer(bitPattern: UInt(id)))
        // HTTP/2 over TLS (RFC 8484 §5.2 recommends it), and wait for a connection being set up rather
        // than open a second one: every query of the transport shares one multiplexed connection.
        curl.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        curl.set(CURLOPT_PIPEWAIT, 1)
        // The whole exchange, connecting included, within the caller's budget.
        curl.set(CURLOPT_TIMEOUT_MS, max(1, timeout.millisecondsRoundedUp))  // 0 would mean "no timeout"
        curl.set(CURLOPT_POSTFIELDSIZE, query.count)
        query.withUnsafeBytes { curl.set(CURLOPT_COPYPOSTFIELDS, pointer: $0.baseAddress) }
        // "Expect:" turns off curl's 100-continue round trip for larger HTTP/1.1 bodies.
        curl.setList(CURLOPT_HTTPHEADER, ["Content-Type: application/dns-message", "Accept: application/dns-message", "Expect:"])
        let context = Unmanaged.passUnretained(self).toOpaque()
        curl.set(CURLOPT_WRITEDATA, pointer: context)
        curl.set(CURLOPT_WRITEFUNCTION) { bytes, size, count, context in
            guard let context else { return 0 }
            let exchange = Unmanaged<DoHExchange>.fromOpaque(context).takeUnretainedValue()
            return exchange.received(UnsafeRawBufferPointer(start: bytes, count: size * count))
        }
    }

    /// Keeps body bytes; returning less than given makes curl stop the transfer (`CURLE_WRITE_ERROR`) at
    /// once when the body outgrows a DNS message.
    private func received(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard body.count + bytes.count <= Self.maximumMessageLength else {
            tooLong = true
            return 0
        }
        body.append(contentsOf: bytes)
        return bytes.count
    }

    /// The reply, checked, once curl reports the transfer done with `code` (RFC 8484 §4.2: a 200 carrying
    /// an `application/dns-message`, here of 12 to 65 535 octets).
    func result(_ code: CURLcode) -> EncryptedExchangeResult {
        var status = 0
        hostpin_curl_getinfo_long(curl.raw, CURLINFO_RESPONSE_CODE, &status)
        // A status other than 200 says more than the body that came with it, however long.
        if status != 0 && status != 200 && (code == CURLE_OK || tooLong) { return .failure(.httpStatus(status)) }
        if tooLong { return .failure(.replyTooLong) }
        guard code == CURLE_OK else { return .failure(curl.failure(code)) }
        var typePointer: UnsafeMutableRawPointer?
        hostpin_curl_getinfo_pointer(curl.raw, CURLINFO_CONTENT_TYPE, &typePointer)
        let contentType = typePointer.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }
        guard let contentType, Self.isDNSMessage(contentType) else { return .failure(.wrongContentType(contentType)) }
        guard body.count >= 12 else { return .failure(.replyTooShort(octets: body.count)) }
        return .success(body)
    }

    /// `application/dns-message`, in any case, parameters allowed (RFC 9110 §8.3.1).
    private static func isDNSMessage(_ contentType: String) -> Bool {
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first ?? ""
        return mediaType.trimmingCharacters(in: .whitespaces).lowercased() == "application/dns-message"
    }
}
