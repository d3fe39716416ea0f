import FuzzSupport
import HostPin
@testable import HostPinProxy

let parser = RequestHeadParser()
/// For heads written from a parsed one, which may be longer than what was read (`X:1` becomes `X: 1`,
/// an invalid UTF-8 octet three octets of U+FFFD, the proxy adds `Via`): the limits are not the
/// property checked.
let lenient: RequestHeadParser = {
    var limits = HeadLimits()
    limits.maximumStartLineBytes *= 4
    limits.maximumFieldLineBytes *= 4
    limits.maximumFieldCount += 4
    limits.maximumHeadBytes *= 4
    return RequestHeadParser(limits: limits)
}()

/// The proxy's request-head parser on any bytes, read as the proxy reads a connection: the head's end
/// found with `HeadSyntax.endOfHead`, then the head parsed. Never a crash; and for a head it accepts:
/// - it is not refused while it arrives: no prefix of it makes `endOfHead` throw;
/// - written out again (request line and field lines as parsed) it is accepted again with the same
///   meaning: method, target, version, fields and body framing;
/// - the head the proxy sends the origin for it (`ForwardedHead.request`) is one the parser accepts, in
///   origin-form, with the authority as `Host` and the same body framing — another framing would let
///   the body smuggle a request past the proxy.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestHead(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    guard case .success(let end?) = endOfHead(bytes) else { return 0 }
    let raw = Array(bytes[..<end])
    guard let head = try? parser.parse(raw) else { return 0 }
    for cut in [1, end / 2, end - 1] where cut > 0 && cut < end {
        property(endOfHead(Array(raw[..<cut])) == .success(nil),
                 "the accepted head \(text(raw)) is refused or ended after its first \(cut) bytes")
    }

    let written = Array("\(head.method) \(head.targetText) \(head.version)\r\n".utf8) + head.fields.wireBytes + [13, 10]
    do {
        let again = try lenient.parse(written)
        property(again == head, "\(text(raw)) written again as \(text(written)) means \(again), not \(head)")
    } catch {
        property(false, "\(text(raw)) written again as \(text(written)) is refused: \(error)")
    }

    guard case .absoluteForm(let authority, let path) = head.target else { return 0 }
    for closing in [false, true] {
        let forwarded = ForwardedHead.request(head, authority: authority, path: path, via: "hostpin", closing: closing)
        let sent: RequestHead
        do {
            sent = try lenient.parse(forwarded)
        } catch {
            property(false, "\(text(raw)) is forwarded as \(text(forwarded)), which is refused: \(error)")
            return 0
        }
        property(sent.method == head.method && sent.target == .originForm(path) && sent.version == .http11,
                 "\(text(raw)) is forwarded with the request line of \(text(forwarded))")
        property(sent.fields.values("Host") == [authority.text], "\(text(raw)) is forwarded with Host \(sent.fields.values("Host"))")
        property(sent.framing == head.framing,
                 "\(text(raw)) (\(head.framing)) is forwarded as \(text(forwarded)), framed \(sent.framing)")
        property(sent.wantsKeepAlive == !closing, "\(text(forwarded)) keep-alive is not \(!closing)")
    }
    relayAgrees(raw, head, authority: authority, path: path)
    return 0
}

/// The keep-alive relay's check in bytes (`RelayRequest`), with the head's own authority kept: when it
/// takes the head, it reads it as the parser did (a `GET` or `HEAD` without a body, the same target and
/// keep-alive) and forwards the same head.
func relayAgrees(_ raw: [UInt8], _ head: RequestHead, authority: RequestTarget.Authority, path: String) {
    guard raw.first != HeadSyntax.cr, let request = RelayRequest.check(raw, authority: authority) else { return }
    property(head.method == request.method && head.framing == .none && head.wantsKeepAlive == request.wantsKeepAlive
        && head.targetText == String(decoding: raw[request.target], as: UTF8.self),
        "the relay reads \(text(raw)) as \(request.method) \(text(raw[request.target])), keep-alive \(request.wantsKeepAlive)")
    for closing in [false, true] {
        var forwarded: [UInt8] = []
        request.forwarded(authority: authority, via: "hostpin", closing: closing, to: &forwarded)
        let expected = ForwardedHead.request(head, authority: authority, path: path, via: "hostpin", closing: closing)
        property(forwarded == expected, "the relay forwards \(text(raw)) as \(text(forwarded)), the task as \(text(expected))")
    }
}

/// Where the head in `bytes` ends (`nil`: not yet), or why it is refused.
func endOfHead(_ bytes: [UInt8]) -> Result<Int?, HeadError> {
    Result { () throws(HeadError) in try HeadSyntax.endOfHead(in: bytes, limits: parser.limits) }
}

/// Bytes as a quoted string, for messages.
func text(_ bytes: some Collection<UInt8>) -> String {
    String(decoding: bytes, as: UTF8.self).debugDescription
}
