import Foundation

/// A request as the policy sees it: method, target and header fields. No body: no rule looks at it.
public struct PolicyRequest: Sendable {
    /// What the request is for.
    public enum Target: Sendable {
        /// An http or https URL (the interceptor; the proxy's absolute-form requests).
        case url(URL)
        /// A `CONNECT host:port` tunnel (RFC 9110 §9.3.6): the URL is inside TLS, so only `host` rules
        /// without `path` apply.
        case authority(host: String, port: Int)
    }

    /// The method, `GET` by default.
    public var method: String
    public var target: Target
    /// The request's header fields in order; names compare case-insensitively.
    public var headers: [(name: String, value: String)]

    /// A request for `url`.
    public init(method: String = "GET", url: URL, headers: [(name: String, value: String)] = []) {
        self.method = method
        self.target = .url(url)
        self.headers = headers
    }

    /// A `CONNECT host:port` request.
    public init(connectTo host: String, port: Int, headers: [(name: String, value: String)] = []) {
        self.method = "CONNECT"
        self.target = .authority(host: host, port: port)
        self.headers = headers
    }

    /// The value of the first field named `name`, compared case-insensitively.
    func value(of name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
