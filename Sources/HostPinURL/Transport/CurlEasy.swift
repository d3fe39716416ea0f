import CCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin

/// One curl easy handle set up for a ``CurlJob``, owned by the multi thread: created, driven and
/// closed there. Its callbacks run there too, so the sink hears one transfer's events in order.
final class CurlEasy {
    let handle: UnsafeMutableRawPointer
    let job: CurlJob
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var connectToList: UnsafeMutablePointer<curl_slist>?
    private var resolveList: UnsafeMutablePointer<curl_slist>?
    private var responded = false
    /// The request body being streamed to curl (`CURLOPT_READFUNCTION`), for file and stream bodies.
    private var upload: InputStream?

    private init(handle: UnsafeMutableRawPointer, job: CurlJob) {
        self.handle = handle
        self.job = job
    }

    /// The transfer's id, stored in `CURLOPT_PRIVATE`.
    static func id(of handle: UnsafeMutableRawPointer) -> Int {
        var pointer: UnsafeMutableRawPointer?
        hostpin_curl_getinfo_pointer(handle, CURLINFO_PRIVATE, &pointer)
        return Int(bitPattern: pointer)
    }

    /// An easy handle for `job`, or why it cannot be made.
    static func make(id: Int, job: CurlJob) -> Result<CurlEasy, TransferFailure> {
        let url = job.request.url
        guard let raw = curl_easy_init() else {
            return .failure(.transfer(URLError(.unknown, url: url, description: "libcurl could not create a handle")))
        }
        let easy = CurlEasy(handle: raw, job: job)
        if let failure = easy.configure(id: id) {
            easy.close()
            return .failure(failure)
        }
        return .success(easy)
    }

    private var raw: UnsafeMutableRawPointer { handle }

    private func configure(id: Int) -> TransferFailure? {
        let request = job.request
        guard let url = request.url else {
            return .transfer(URLError(.badURL, url: nil, description: "the request has no URL"))
        }
        var result = CURLE_OK
        func set(_ code: CURLcode) { if result == CURLE_OK { result = code } }

        set(hostpin_curl_setopt_string(raw, CURLOPT_URL, url.absoluteString))
        set(hostpin_curl_setopt_pointer(raw, CURLOPT_PRIVATE, UnsafeRawPointer(bitPattern: id)))
        // Connect to the pinned addresses; the URL keeps the name for Host, SNI and the certificate check.
        // CURLOPT_CONNECT_TO, with CURLOPT_RESOLVE only for a stand-in name (CurlPinning): curl reuses a
        // kept-alive connection only when its connect-to host matches too, whereas RESOLVE for the URL's
        // name matches the name and port alone and would reuse a connection to an address the name no
        // longer resolves to.
        if let pinning = job.pinning {
            connectToList = curl_slist_append(nil, pinning.connectTo)
            set(hostpin_curl_setopt_pointer(raw, CURLOPT_CONNECT_TO, connectToList))
            if let resolve = pinning.resolve {
                resolveList = curl_slist_append(nil, resolve)
                set(hostpin_curl_setopt_pointer(raw, CURLOPT_RESOLVE, resolveList))
            }
        }
        if let delay = job.attemptDelay {
            let (seconds, attoseconds) = delay.components
            let milliseconds = Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
            set(hostpin_curl_setopt_long(raw, CURLOPT_HAPPY_EYEBALLS_TIMEOUT_MS, milliseconds))
        }
        // Never an environment proxy. (Without a connect-to entry — a host a `pass` rule leaves to the
        // system — curl resolves the name itself, through the system.)
        set(hostpin_curl_setopt_string(raw, CURLOPT_NOPROXY, "*"))
        set(hostpin_curl_setopt_string(raw, CURLOPT_PROTOCOLS_STR, "http,https"))
        set(hostpin_curl_setopt_long(raw, CURLOPT_FOLLOWLOCATION, 0))
        set(hostpin_curl_setopt_long(raw, CURLOPT_NOSIGNAL, 1))
        // URLSession decodes gzip/deflate bodies for the app; so does this transport.
        set(hostpin_curl_setopt_string(raw, CURLOPT_ACCEPT_ENCODING, ""))
        if let caFile = job.tls.extraCAFile {
            set(hostpin_curl_setopt_string(raw, CURLOPT_CAINFO, caFile))
            if let systemCAs = CurlLibrary.defaultCAPath {
                set(hostpin_curl_setopt_string(raw, CURLOPT_CAPATH, systemCAs))
            }
        }

        // URLRequest.timeoutInterval is an idle timeout: no connection, or no byte, for that long.
        let timeout = max(1, request.timeoutInterval)
        set(hostpin_curl_setopt_long(raw, CURLOPT_CONNECTTIMEOUT_MS, Int(timeout * 1000)))
        set(hostpin_curl_setopt_long(raw, CURLOPT_LOW_SPEED_LIMIT, 1))
        set(hostpin_curl_setopt_long(raw, CURLOPT_LOW_SPEED_TIME, Int(timeout.rounded(.up))))

        let method = request.httpMethod?.uppercased() ?? "GET"
        let context = Unmanaged.passUnretained(self).toOpaque()
        switch (method, job.body) {
        case ("HEAD", _):
            set(hostpin_curl_setopt_long(raw, CURLOPT_NOBODY, 1))
        case ("GET", .none):
            break
        case (_, .none):
            set(hostpin_curl_setopt_offset(raw, CURLOPT_POSTFIELDSIZE_LARGE, 0))
            set(hostpin_curl_setopt_string(raw, CURLOPT_COPYPOSTFIELDS, ""))
        case (_, .data(let body)):
            set(hostpin_curl_setopt_offset(raw, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
            set(body.withUnsafeBytes { bytes in
                hostpin_curl_setopt_pointer(raw, CURLOPT_COPYPOSTFIELDS, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1))
            })
        case (_, .file), (_, .stream):
            guard let stream = job.body.inputStream() else {
                return .transfer(URLError(.requestBodyStreamExhausted, url: url,
                                          description: "the request body stream was already read"))
            }
            stream.open()
            upload = stream
            set(hostpin_curl_setopt_long(raw, CURLOPT_POST, 1))
            // Unknown length (-1): curl sends the body chunked (RFC 9112 §7.1).
            set(hostpin_curl_setopt_offset(raw, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(job.body.length ?? -1)))
            set(hostpin_curl_setopt_pointer(raw, CURLOPT_READDATA, context))
            set(hostpin_curl_setopt_write(raw, CURLOPT_READFUNCTION) { buffer, size, count, context in
                guard let context, let buffer else { return 0 }
                let easy = Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue()
                return easy.readBody(into: buffer, capacity: size * count)
            })
        }
        if method != "GET" && method != "POST" && method != "HEAD" {
            set(hostpin_curl_setopt_string(raw, CURLOPT_CUSTOMREQUEST, method))
        }
        // "Expect:" turns off curl's 100-continue round trip, which URLSession does not make either. Host
        // comes from the URL, as on the URLSession path: an application's own Host header is not sent.
        let fields = (request.allHTTPHeaderFields ?? [:]).filter { $0.key.lowercased() != "host" }
        for line in fields.map({ "\($0.key): \($0.value)" }) + ["Expect:"] {
            headerList = curl_slist_append(headerList, line)
        }
        set(hostpin_curl_setopt_pointer(raw, CURLOPT_HTTPHEADER, headerList))

        if job.reportsConnections {
            set(hostpin_curl_setopt_pointer(raw, CURLOPT_OPENSOCKETDATA, context))
            set(hostpin_curl_setopt_opensocket(raw, CURLOPT_OPENSOCKETFUNCTION) { context, _, address in
                guard let context, let address else { return HOSTPIN_CURL_SOCKET_BAD }
                let easy = Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue()
                return easy.openSocket(address)
            })
        }
        set(hostpin_curl_setopt_pointer(raw, CURLOPT_HEADERDATA, context))
        set(hostpin_curl_setopt_write(raw, CURLOPT_HEADERFUNCTION) { bytes, size, count, context in
            guard let context else { return 0 }
            let easy = Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue()
            easy.header(UnsafeRawBufferPointer(start: bytes, count: size * count))
            return size * count
        })
        set(hostpin_curl_setopt_pointer(raw, CURLOPT_WRITEDATA, context))
        set(hostpin_curl_setopt_write(raw, CURLOPT_WRITEFUNCTION) { bytes, size, count, context in
            guard let context, let bytes else { return 0 }
            let easy = Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue()
            easy.body(Data(bytes: bytes, count: size * count))
            return size * count
        })
        guard result == CURLE_OK else {
            return .transfer(URLError(.badURL, url: url, description: String(cString: curl_easy_strerror(result))))
        }
        return nil
    }

    /// A header line. A blank line ends a header block; the first final (non-1xx) block is the response.
    private func header(_ line: UnsafeRawBufferPointer) {
        guard !responded, line.count <= 2, line.allSatisfy({ $0 == 0x0D || $0 == 0x0A }) else { return }
        var status = 0
        hostpin_curl_getinfo_long(raw, CURLINFO_RESPONSE_CODE, &status)
        guard status >= 200, let url = job.request.url else { return }
        var fields: [String: String] = [:]
        var previous: UnsafeMutablePointer<curl_header>?
        while let next = curl_easy_nextheader(raw, UInt32(HOSTPIN_CURLH_HEADER), -1, previous) {
            let name = String(cString: next.pointee.name)
            let value = String(cString: next.pointee.value)
            // Repeated fields are joined with ", " as RFC 9110 §5.3 allows (and Foundation does).
            if let existing = fields[name] { fields[name] = existing + ", " + value } else { fields[name] = value }
            previous = next
        }
        guard let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)
        else { return }
        responded = true
        recordConnectionTime()
        job.sink.received(response, from: job.reportsConnections ? primaryAddress() : nil)
    }

    /// Opens the socket of one connection attempt, as curl's default does but close-on-exec, and tells
    /// the sink where it goes (`CURLOPT_OPENSOCKETFUNCTION`, set only when the job reports connections).
    private func openSocket(_ address: UnsafeMutablePointer<curl_sockaddr>) -> curl_socket_t {
        let target = address.pointee
        if let ip = Self.ipAddress(family: target.family, at: &address.pointee.addr) { job.sink.attempting(ip) }
        let descriptor = socket(target.family, target.socktype | Int32(SOCK_CLOEXEC.rawValue), target.protocol)
        return descriptor >= 0 ? descriptor : HOSTPIN_CURL_SOCKET_BAD
    }

    /// The address of an IPv4 or IPv6 socket address (curl's `struct curl_sockaddr` holds a whole one).
    private static func ipAddress(family: Int32, at address: UnsafeMutablePointer<sockaddr>) -> IPAddress? {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written: UnsafePointer<CChar>?
        switch family {
        case AF_INET:
            written = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                inet_ntop(AF_INET, &inet.pointee.sin_addr, &text, socklen_t(text.count))
            }
        case AF_INET6:
            written = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { inet6 in
                inet_ntop(AF_INET6, &inet6.pointee.sin6_addr, &text, socklen_t(text.count))
            }
        default:
            return nil
        }
        guard written != nil else { return nil }
        return IPAddress(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// The address the transfer is connected to (`CURLINFO_PRIMARY_IP`).
    private func primaryAddress() -> IPAddress? {
        var text: UnsafeMutablePointer<CChar>?
        guard hostpin_curl_getinfo_string(raw, CURLINFO_PRIMARY_IP, &text) == CURLE_OK, let text else { return nil }
        return IPAddress(String(cString: text))
    }

    /// Tells the feed how long this transfer's connection took to be usable, when the transfer made a new
    /// one (a reused connection was measured when it was made): for HTTPS until the TLS handshake was
    /// done, which with verification always on means the name's certificate was verified
    /// (`CURLINFO_APPCONNECT_TIME_T`); for plain HTTP until TCP connected (`CURLINFO_CONNECT_TIME_T`). Both
    /// count from the transfer's start: the name lookup (a connect-to entry's: none) is taken off, the
    /// Happy Eyeballs stagger before the winning attempt is not.
    private func recordConnectionTime() {
        guard let feed = job.feed, let address = primaryAddress() else { return }
        var connects = 0
        guard hostpin_curl_getinfo_long(raw, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK, connects > 0 else { return }
        let secure = job.request.url?.scheme?.lowercased() == "https"
        var connected: curl_off_t = 0
        var lookup: curl_off_t = 0
        guard hostpin_curl_getinfo_offset(raw, secure ? CURLINFO_APPCONNECT_TIME_T : CURLINFO_CONNECT_TIME_T, &connected)
                == CURLE_OK, connected > 0 else { return }
        _ = hostpin_curl_getinfo_offset(raw, CURLINFO_NAMELOOKUP_TIME_T, &lookup)
        feed.ranking.record(.microseconds(Int64(max(connected - lookup, 0))), to: address, port: feed.port)
    }

    private func body(_ data: Data) {
        job.sink.received(data)
    }

    /// Fills curl's upload buffer from the body stream: bytes read, 0 at the end, abort on a read error.
    private func readBody(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        guard let upload else { return 0 }
        let count = buffer.withMemoryRebound(to: UInt8.self, capacity: capacity) { upload.read($0, maxLength: capacity) }
        return count >= 0 ? count : Int(HOSTPIN_CURL_READFUNC_ABORT)
    }

    /// Reports the transfer's end to the sink. A certificate that failed the check for the name
    /// (`CURLE_PEER_FAILED_VERIFICATION`) is reported with the address that presented it, which the feed
    /// excludes for the name.
    func finish(_ result: CURLcode) {
        guard result != CURLE_OK else {
            job.sink.finished(with: nil)
            return
        }
        var failure = TransferFailure(curl: result, message: String(cString: curl_easy_strerror(result)), url: job.request.url)
        if result == CURLE_PEER_FAILED_VERIFICATION, job.pinning != nil, let address = primaryAddress() {
            failure = .certificate(failure.urlError, address: address)
            if let feed = job.feed { feed.ranking.exclude(address, for: feed.name) }
        }
        job.sink.finished(with: failure)
    }

    /// Frees the handle and its lists; call once, after removing it from the multi handle.
    func close() {
        upload?.close()
        upload = nil
        curl_easy_cleanup(raw)
        curl_slist_free_all(headerList)
        curl_slist_free_all(connectToList)
        curl_slist_free_all(resolveList)
        headerList = nil
        connectToList = nil
        resolveList = nil
    }
}
