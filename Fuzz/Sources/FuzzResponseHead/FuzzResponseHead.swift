import FuzzSupport
import HostPin
@testable import HostPinProxy

let limits = HeadLimits()
/// For heads the proxy writes from a parsed one (`X:1` becomes `X: 1`, `Via` is added): the limits are
/// not the property checked.
let lenient: HeadLimits = {
    var limits = HeadLimits()
    limits.maximumStartLineBytes *= 4
    limits.maximumFieldLineBytes *= 4
    limits.maximumFieldCount += 4
    limits.maximumHeadBytes *= 4
    return limits
}()

/// An origin's response head on any bytes, read as the proxy reads it (`endOfHead`, `ResponseHead.parse`,
/// `framing(requestMethod:)`): never a crash; and for each request method and client version, the head
/// the proxy sends the client (`ForwardedHead.response`, with the coding and keep-alive the proxy
/// chooses) is one that parses to the same status and a framing that delimits the body the proxy relays:
/// the origin's, or until close when a chunked body goes to an HTTP/1.0 client. A client reading
/// another framing than the proxy writes would take body bytes for the next response.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResponseHead(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    guard let end = try? HeadSyntax.endOfHead(in: bytes, limits: limits),
          let response = try? ResponseHead.parse(Array(bytes[..<end]), limits: limits)
    else { return 0 }
    for method in ["GET", "HEAD", "POST"] {
        guard let framing = try? response.framing(requestMethod: method) else { continue }
        for clientVersion in [HTTPVersion.http11, .http10] {
            // As ProxyConnection decides them.
            let coding: BodyRelay.OutputCoding = framing == .chunked && clientVersion == .http11 ? .chunked : .identity
            let keepAlive = clientVersion == .http11 && framing != .untilClose && !(framing == .chunked && coding == .identity)
            let forwarded = ForwardedHead.response(response, coding: coding, closing: !keepAlive, via: "hostpin")
            let sent: ResponseHead
            let sentFraming: BodyFraming
            do throws(HeadError) {
                sent = try ResponseHead.parse(forwarded, limits: lenient)
                sentFraming = try sent.framing(requestMethod: method)
            } catch {
                property(false, "\(text(bytes)) is forwarded as \(text(forwarded)), which is refused: \(error)")
                return 0
            }
            let relayed: BodyFraming = framing == .chunked && coding == .identity ? .untilClose : framing
            property(sent.status == response.status && sent.reason == response.reason,
                     "\(text(bytes)) is forwarded with the status line of \(text(forwarded))")
            property(sentFraming == relayed,
                     "\(method): \(text(bytes)) (\(framing)) is forwarded to an \(clientVersion) client as \(text(forwarded)), framed \(sentFraming), while \(relayed) is relayed")
            property(relayed != .untilClose || sent.controlFields.contains("Connection", token: "close"),
                     "\(text(forwarded)) ends its body at close but does not say Connection: close")
        }
    }
    return 0
}

/// Bytes as a quoted string, for messages.
func text(_ bytes: some Collection<UInt8>) -> String {
    String(decoding: bytes.prefix(1024), as: UTF8.self).debugDescription
}
