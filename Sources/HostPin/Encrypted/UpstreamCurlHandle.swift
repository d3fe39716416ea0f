import CCurl

/// One curl easy handle set up to reach an encrypted upstream (or, for ``CertificateProbe``, an HTTPS
/// address whose certificate is checked), owned by one thread (made, used and closed there).
///
/// The URL keeps the upstream's NAME, so TLS sends it as SNI and the certificate is checked against
/// it; `CURLOPT_RESOLVE` maps NAME:PORT to the bootstrap addresses, so curl never asks the system
/// resolver (which an on-path box may answer). No proxy, `https` only, the extra CA file beside the
/// system's CAs, the pins. `CURLOPT_SSL_VERIFYPEER` and `CURLOPT_SSL_VERIFYHOST` are never touched:
/// libcurl's defaults verify the chain and the name.
final class UpstreamCurlHandle {
    let raw: UnsafeMutableRawPointer
    private var lists: [UnsafeMutablePointer<curl_slist>] = []
    /// `CURLOPT_ERRORBUFFER`: curl's detailed message for the last failure.
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// The first option curl refused, kept so that one check after setting them all reports it.
    private(set) var setupResult = CURLE_OK

    /// A handle for `url` on `upstream`, or `nil` when libcurl cannot make one (out of memory).
    init?(upstream: EncryptedUpstream, url: String) {
        CurlLibrary.initialiseOnce()
        guard let raw = curl_easy_init() else { return nil }
        self.raw = raw
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        set(CURLOPT_ERRORBUFFER, pointer: errorBuffer)
        set(CURLOPT_URL, url)
        if upstream.name.literalAddress == nil {
            let addresses = upstream.bootstrap.map(\.uriHost).joined(separator: ",")
            setList(CURLOPT_RESOLVE, ["\(upstream.name.text):\(upstream.port):\(addresses)"])
        }
        set(CURLOPT_NOPROXY, "*")
        set(CURLOPT_PROTOCOLS_STR, "https")
        set(CURLOPT_NOSIGNAL, 1)
        if let caFile = upstream.extraCAFile {
            set(CURLOPT_CAINFO, caFile)
            if let systemCAs = CurlLibrary.defaultCAPath { set(CURLOPT_CAPATH, systemCAs) }
        }
        if !upstream.pins.isEmpty {
            set(CURLOPT_PINNEDPUBLICKEY, upstream.pins.map(\.description).joined(separator: ";"))
        }
    }

    func set(_ option: CURLoption, _ value: Int) {
        record(hostpin_curl_setopt_long(raw, option, value))
    }

    func set(_ option: CURLoption, _ value: String) {
        record(hostpin_curl_setopt_string(raw, option, value))
    }

    func set(_ option: CURLoption, pointer: UnsafeRawPointer?) {
        record(hostpin_curl_setopt_pointer(raw, option, pointer))
    }

    /// Sets a callback option (`CURLOPT_WRITEFUNCTION`), called with the pointer set by its data option.
    func set(_ option: CURLoption,
             callback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int) {
        record(hostpin_curl_setopt_write(raw, option, callback))
    }

    /// Sets a list option (`CURLOPT_HTTPHEADER`, `CURLOPT_RESOLVE`); the list lives until ``close()``.
    func setList(_ option: CURLoption, _ lines: [String]) {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines { list = curl_slist_append(list, line) }
        guard let list else {
            record(CURLE_OUT_OF_MEMORY)
            return
        }
        lists.append(list)
        set(option, pointer: list)
    }

    private func record(_ code: CURLcode) {
        if setupResult == CURLE_OK { setupResult = code }
    }

    /// The failure for libcurl result `code` on this handle, with curl's detailed message.
    func failure(_ code: CURLcode) -> EncryptedTransportFailure {
        EncryptedTransportFailure(curl: code, handle: raw, message: String(cString: errorBuffer))
    }

    /// `CURLINFO_NUM_CONNECTS`: the connections this handle's transfer opened (each one TLS handshake).
    var connectionsOpened: Int {
        var count = 0
        hostpin_curl_getinfo_long(raw, CURLINFO_NUM_CONNECTS, &count)
        return count
    }

    /// Frees the handle and its lists; call once, after removing it from any multi handle.
    func close() {
        curl_easy_cleanup(raw)
        for list in lists { curl_slist_free_all(list) }
        lists.removeAll()
        errorBuffer.deallocate()
    }
}
