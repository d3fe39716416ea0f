/// What a request to the metrics endpoint asks for, decided from its head alone (no sockets): the
/// metrics, the health check, the status page or its JSON, or a refusal with its status.
enum MetricsRequest: Sendable, Hashable {
    /// `GET /`: the status page (HEAD: the head only).
    case page(headOnly: Bool)
    /// `GET /status.json`: what the status page shows (HEAD: the head only).
    case status(headOnly: Bool)
    /// `GET /metrics` (HEAD: the head only).
    case metrics(headOnly: Bool)
    /// `GET /healthz` (HEAD: the head only).
    case health(headOnly: Bool)
    /// Another path: 404.
    case notFound(path: String)
    /// A known path with a method other than GET and HEAD (or CONNECT, `OPTIONS *`): 405 with
    /// `Allow: GET, HEAD`.
    case methodNotAllowed(method: String)

    /// The paths served.
    static let metricsPath = "/metrics"
    static let healthPath = "/healthz"
    static let pagePath = "/"
    static let statusPath = "/status.json"
    static let paths = [metricsPath, healthPath, pagePath, statusPath]

    /// Routes `head` by path first (the query is ignored), then by method. An absolute-form target
    /// (`GET http://host/metrics`) names its path as well as origin-form does (RFC 9112 §3.2.2: a server
    /// must accept it).
    init(_ head: RequestHead) {
        let target: String
        switch head.target {
        case .originForm(let path), .absoluteForm(_, let path):
            target = path
        case .authorityForm, .asteriskForm:
            self = .methodNotAllowed(method: head.method)
            return
        }
        let path = String(target.prefix { $0 != "?" })
        guard Self.paths.contains(path) else {
            self = .notFound(path: path)
            return
        }
        guard head.method == "GET" || head.method == "HEAD" else {
            self = .methodNotAllowed(method: head.method)
            return
        }
        let headOnly = head.method == "HEAD"
        switch path {
        case Self.metricsPath: self = .metrics(headOnly: headOnly)
        case Self.healthPath: self = .health(headOnly: headOnly)
        case Self.pagePath: self = .page(headOnly: headOnly)
        default: self = .status(headOnly: headOnly)
        }
    }
}
