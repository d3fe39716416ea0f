import HostPin

/// A response of the metrics endpoint: status, media type, body, and whether the connection closes
/// after it. Every response has `Content-Length`; errors have a one-line text body.
struct MetricsResponse: Sendable, Hashable {
    let status: Int
    let contentType: String
    let body: [UInt8]
    /// Send the head only (HEAD), with the body's length.
    var headOnly = false
    /// Say `Connection: close` and close after it.
    var closing = false
    /// The methods a 405 names in `Allow`.
    var allow: String?
    /// Say `Retry-After: 1` (a 503 for too many connections: one frees soon).
    var retryAfter = false
    /// The status page's `Content-Security-Policy` (its script's nonce in it).
    var contentSecurityPolicy: String?

    static let textType = "text/plain; charset=utf-8"

    /// The answer to `request`, reading `metrics` now.
    init(_ request: MetricsRequest, metrics: ServiceMetrics) {
        switch request {
        case .metrics(let headOnly):
            self.init(status: 200, contentType: ServiceMetrics.contentType, body: Array(metrics.exposition().utf8),
                      headOnly: headOnly)
        case .health(let headOnly):
            let health = metrics.health
            self.init(status: health.isHealthy ? 200 : 503, contentType: Self.textType, body: Array((health.reason + "\n").utf8),
                      headOnly: headOnly)
        case .page(let headOnly):
            let nonce = StatusPage.makeNonce()
            self.init(status: 200, contentType: "text/html; charset=utf-8",
                      body: Array(StatusPage.html(metrics.status(), nonce: nonce).utf8), headOnly: headOnly)
            contentSecurityPolicy = StatusPage.contentSecurityPolicy(nonce: nonce)
        case .status(let headOnly):
            self.init(status: 200, contentType: "application/json", body: Array((metrics.status().htmlSafeText + "\n").utf8),
                      headOnly: headOnly)
        case .notFound(let path):
            self = .error(404, "Not found: \(path) (the endpoint serves \(MetricsRequest.paths.joined(separator: ", "))).")
        case .methodNotAllowed(let method):
            self = .error(405, "Method \(method) is not allowed: use GET or HEAD.")
            allow = "GET, HEAD"
        }
    }

    init(status: Int, contentType: String, body: [UInt8], headOnly: Bool = false) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headOnly = headOnly
    }

    /// An error with a one-line text body, closing the connection.
    static func error(_ status: Int, _ sentence: String) -> MetricsResponse {
        var response = MetricsResponse(status: status, contentType: textType, body: Array((sentence + "\n").utf8))
        response.closing = true
        return response
    }

    /// The bytes sent: status line, fields, and the body unless ``headOnly``.
    var wireBytes: [UInt8] {
        var head = "HTTP/1.1 \(status) \(ReasonPhrase.for(status))\r\n"
            + "Content-Type: \(contentType)\r\n"
            + "Content-Length: \(body.count)\r\n"
            + "Cache-Control: no-store\r\n"
            + "X-Content-Type-Options: nosniff\r\n"
        if let contentSecurityPolicy { head += "Content-Security-Policy: \(contentSecurityPolicy)\r\n" }
        if let allow { head += "Allow: \(allow)\r\n" }
        if retryAfter { head += "Retry-After: 1\r\n" }
        if closing { head += "Connection: close\r\n" }
        head += "\r\n"
        return Array(head.utf8) + (headOnly ? [] : body)
    }
}
