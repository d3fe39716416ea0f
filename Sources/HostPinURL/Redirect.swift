import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The request URLSession would send after a 3xx, built without touching the network.
enum Redirect {
    /// The statuses URLSession follows (RFC 9110 §15.4).
    static let statuses: Set<Int> = [301, 302, 303, 307, 308]

    /// The next request after `response` to `request`, or `nil` when `response` is no redirect URLSession
    /// follows (another status, or no usable `Location`).
    ///
    /// - Throws: `URLError.unsupportedURL` when `Location` names a scheme other than http or https
    ///   (`file:`, `ftp:`, `javascript:`): following it is refused, as URLSession refuses it.
    ///
    /// - `Location` is resolved against the current URL (RFC 9110 §10.2.2), so relative ones stay on
    ///   the current host;
    /// - 301 and 302 turn POST into GET and 303 turns anything but HEAD into GET, dropping the body and
    ///   its headers (RFC 9110 §15.4.2-4, as browsers and URLSession do); 307 and 308 keep method and body;
    /// - `Host`, `Cookie` and `Authorization` are left out: the transport sets `Host` for each hop, and
    ///   the caller adds the credentials and cookies the hop may carry (``OriginCredentials``).
    static func next(after response: HTTPURLResponse, to request: URLRequest) throws(URLError) -> URLRequest? {
        guard statuses.contains(response.statusCode), let current = request.url,
              let location = response.value(forHTTPHeaderField: "Location"), !location.isEmpty,
              let target = URL(string: location, relativeTo: current)?.absoluteURL
        else { return nil }
        guard let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = target.host, !host.isEmpty
        else {
            throw URLError(.unsupportedURL, url: target,
                           description: "a \(response.statusCode) redirect points to \(location), which is not an http(s) URL")
        }
        var next = request
        next.url = target
        let method = request.httpMethod?.uppercased() ?? "GET"
        let becomesGET = switch response.statusCode {
        case 301, 302: method == "POST"
        case 303: method != "HEAD" && method != "GET"
        default: false
        }
        if becomesGET {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            for header in ["Content-Type", "Content-Length", "Transfer-Encoding"] {
                next.setValue(nil, forHTTPHeaderField: header)
            }
        }
        for header in ["Host", "Cookie", "Authorization"] { next.setValue(nil, forHTTPHeaderField: header) }
        return next
    }
}
