import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FuzzSupport
import HostPin
@testable import HostPinURL

let statuses = [301, 302, 303, 307, 308, 200]
let methods = ["GET", "POST", "HEAD", "PUT"]
let addresses = [IPAddress("127.0.0.10")!, IPAddress("::1")!]

/// The interceptor's URL handling on any input (an http or https URL, as it takes): byte 0 picks the status, byte 1 the method, the rest is
/// the request URL, a newline, and the response's `Location`. `PinnedRequest` rewrites the URL to each
/// pinned address (IPv4, IPv6), `Redirect.next` builds the next hop, `OriginCredentials` decides its
/// `Authorization` and `Cookie`, and `presenting` makes the response the application sees. Never a
/// crash; and:
/// - the rewritten request goes to the address, keeps path and query, and names the original host in
///   `Host` (`curlPinning` names the address and the URL's port);
/// - the next hop is http(s) with a host, never carries `Host`, and carries the application's
///   `Authorization` and `Cookie` only to the first URL's origin;
/// - the response the application sees carries the URL it asked for.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRedirect(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    guard bytes.count >= 2 else { return 0 }
    let status = statuses[Int(bytes[0]) % statuses.count]
    let method = methods[Int(bytes[1]) % methods.count]
    let (urlBytes, locationBytes) = split(Array(bytes.dropFirst(2)), at: UInt8(ascii: "\n"))
    // Only http and https requests reach the interceptor (`PinnedURLProtocol.canInit`).
    guard let url = URL(string: String(decoding: urlBytes, as: UTF8.self)),
          let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https"
    else { return 0 }
    let location = String(decoding: locationBytes, as: UTF8.self)

    var request = URLRequest(url: url)
    request.httpMethod = method
    request.setValue("Basic eDp5", forHTTPHeaderField: "Authorization")
    request.setValue("session=1", forHTTPHeaderField: "Cookie")
    if method != "GET" && method != "HEAD" { request.httpBody = Data("body".utf8) }
    guard let pinned = PinnedRequest(request, body: request.httpBody.map(RequestBody.data) ?? RequestBody.none) else { return 0 }
    for address in addresses {
        checkAddressed(pinned, to: address)
    }

    guard let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1",
                                         headerFields: ["Location": location]) else { return 0 }
    _ = pinned.presenting(response)
    if let moved = URL(string: "http://moved.example.test/base/"),
       let transparent = PinnedRequest(request, presentedURL: moved) {
        let presented = transparent.presenting(response)
        property(presented.url == moved, "the response to a transparent redirect shows \(String(describing: presented.url))")
    }

    let credentials = OriginCredentials(of: request, cookieStorage: nil)
    let next: URLRequest?
    do {
        next = try Redirect.next(after: response, to: request)
    } catch {
        return 0
    }
    guard var next else { return 0 }
    let nextScheme = next.url?.scheme?.lowercased()
    property((nextScheme == "http" || nextScheme == "https") && next.url?.host?.isEmpty == false,
             "\(url) + Location \(location.debugDescription) → \(String(describing: next.url))")
    property(next.value(forHTTPHeaderField: "Host") == nil, "the next hop to \(String(describing: next.url)) carries Host")
    credentials.apply(to: &next, cookieStorage: nil)
    if !sameOrigin(url, next.url) {
        property(next.value(forHTTPHeaderField: "Authorization") == nil && next.value(forHTTPHeaderField: "Cookie") == nil,
                 "credentials for \(url) go to \(String(describing: next.url))")
    }
    _ = PinnedRequest(next)
    return 0
}

/// Checks the rewriting for a host the resolver accepts: only those are ever sent to an address.
func checkAddressed(_ pinned: PinnedRequest, to address: IPAddress) {
    guard (try? HostName.parse(pinned.host)) != nil else { return }
    if let pinning = pinned.curlPinning(to: [address]) {
        property(pinning.connectTo == "::\(address.uriHost):\(pinned.port)" && pinning.resolve == nil,
                 "connect-to entry \(pinning) for \(address)")
    }
    guard let addressed = pinned.addressed(to: address), let target = addressed.url else { return }
    property(target.host == address.uriHost || target.host == address.description,
             "\(pinned.url) to \(address) is sent to \(target)")
    property(target.path == pinned.url.path && target.query == pinned.url.query,
             "\(pinned.url) to \(address) is sent as \(target)")
    property(addressed.value(forHTTPHeaderField: "Host")
                 == PinnedRequest.hostHeader(host: pinned.host, port: pinned.url.port, scheme: pinned.url.scheme),
             "\(pinned.url) to \(address) carries Host \(String(describing: addressed.value(forHTTPHeaderField: "Host")))")
}

/// RFC 6454 §4 origins, as `OriginCredentials` compares them.
func sameOrigin(_ a: URL, _ b: URL?) -> Bool {
    guard let b else { return false }
    func origin(_ url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        return "\(scheme)://\(host):\(url.port ?? (scheme == "https" ? 443 : 80))"
    }
    return origin(a) != nil && origin(a) == origin(b)
}
