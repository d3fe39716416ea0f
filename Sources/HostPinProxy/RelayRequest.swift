/// A keep-alive connection's next request checked in its own bytes, for ``KeepAliveRelay``: the request
/// the relay serves, recognised and forwarded without building a ``RequestHead`` (a `String` per field,
/// the method, the target and its path, and the head's copy were the relay's largest share of
/// allocations per request).
///
/// It recognises only that request — `GET` or `HEAD`, exactly `HTTP/1.1`, the target `http://` plus the
/// kept authority's text as the previous request wrote it, then a path, a query or nothing, one `Host`,
/// neither `Content-Length` nor `Transfer-Encoding` (no body) — and anything else is `nil`: the task
/// then parses the head with ``RequestHeadParser`` and answers it as any request, refusals included.
/// Every head it takes, that parser takes too, with the same meaning: the same method, target, framing
/// (none), keep-alive and forwarded head (`RelayRequestTests` and the request-head fuzzer compare them),
/// so the relay cannot disagree with the task about where a message ends (request smuggling).
struct RelayRequest {
    /// Whether the method is `HEAD` (its response has no body, RFC 9110 §9.3.2); else it is `GET`.
    let isHead: Bool
    /// The request-target's bytes in the head.
    let target: Range<Int>
    /// The origin-form path the target gives, as ``RequestTarget/parse(_:method:known:)`` gives it.
    let path: ArraySlice<UInt8>
    /// The field lines, checked as the parser checks them.
    let lines: FieldLines
    /// The field names `Connection` lists (hop-by-hop, RFC 9110 §7.6.1): `Content-Length` excepted.
    let named: [String]
    /// No `Connection: close` (RFC 9112 §9.3): the client keeps the connection.
    let wantsKeepAlive: Bool

    /// The method as the access log and the response's framing take it.
    var method: String { isHead ? "HEAD" : "GET" }

    /// Checks `head` — exactly one whole head, CRLF CRLF included, whose line endings and size limits
    /// ``HeadSyntax/endOfHead(in:limits:)`` has checked — as a request for `authority`, the connection's
    /// kept origin.
    ///
    /// - Returns: The request, or `nil` for any head the relay does not serve (well formed or not).
    static func check(_ head: [UInt8], authority: RequestTarget.Authority) -> RelayRequest? {
        guard let lineEnd = head.firstIndex(of: HeadSyntax.cr) else { return nil }
        let isHead: Bool
        var index: Int
        if head.starts(with: get) {
            isHead = false
            index = get.count
        } else if head.starts(with: headMethod) {
            isHead = true
            index = headMethod.count
        } else {
            return nil
        }
        // The target: every byte visible ASCII (as RequestTarget.parse requires), up to the one space.
        let targetStart = index
        while index < lineEnd, head[index] != HeadSyntax.space {
            guard head[index] > 0x20, head[index] < 0x7F, head[index] != UInt8(ascii: "#") else { return nil }
            index += 1
        }
        let target = targetStart..<index
        guard head[index..<lineEnd].elementsEqual(versionSuffix) else { return nil }
        guard let path = path(of: head[target], after: authority),
              let lines = try? FieldLines(head, from: lineEnd + 2)
        else { return nil }
        var hosts = 0
        var connection: [FieldLines.Line] = []
        for line in lines.lines {
            let name = head[line.name]
            if HeadSyntax.equalsIgnoringASCIICase(name, lowercased: host) {
                hosts += 1
            } else if HeadSyntax.equalsIgnoringASCIICase(name, lowercased: contentLength)
                || HeadSyntax.equalsIgnoringASCIICase(name, lowercased: transferEncoding)
            {
                return nil  // a body (or a framing the parser refuses): the task's
            } else if HeadSyntax.equalsIgnoringASCIICase(name, lowercased: connectionName) {
                connection.append(line)
            }
        }
        guard hosts == 1 else { return nil }  // none or more: the parser's refusal
        // Strings only for a `Connection` field, which the common request (and wrk's) does not send.
        let fields = connection.isEmpty ? HeaderFields() : lines.strings(named: [connectionName])
        return RelayRequest(isHead: isHead, target: target, path: path, lines: lines, named: HopByHop.named(in: fields),
                            wantsKeepAlive: !fields.contains("Connection", token: "close"))
    }

    /// The path of `target` when it is `http://` + `known.text` and then a path (`/…`), a query (`?…`,
    /// which gets a `/` before it) or nothing (`/`), as ``RequestTarget/parse(_:method:known:)`` reads it.
    private static func path(of target: ArraySlice<UInt8>, after known: RequestTarget.Authority) -> ArraySlice<UInt8>? {
        guard target.starts(with: scheme) else { return nil }
        let rest = target.dropFirst(scheme.count)
        guard rest.starts(with: known.text.utf8) else { return nil }
        let after = rest.dropFirst(known.text.utf8.count)
        guard let first = after.first else { return slash[...] }
        guard first == UInt8(ascii: "/") || first == UInt8(ascii: "?") else { return nil }
        return after
    }

    /// Appends the head for the origin to `bytes`: what ``ForwardedHead/request(_:authority:path:via:closing:edits:)``
    /// sends for the same request without edits.
    func forwarded(authority: RequestTarget.Authority, via: String, closing: Bool, to bytes: inout [UInt8]) {
        bytes.reserveCapacity(bytes.count + lines.bytes.count + path.count + authority.text.utf8.count + via.utf8.count + 96)
        bytes.append(contentsOf: isHead ? Self.headMethod : Self.get)
        if path.first == UInt8(ascii: "?") { bytes.append(UInt8(ascii: "/")) }
        bytes.append(contentsOf: path)
        ForwardedHead.appendHostLine(authority, to: &bytes)
        for line in lines.lines {
            let name = lines.bytes[line.name]
            if !HeadSyntax.equalsIgnoringASCIICase(name, lowercased: Self.host), !HopByHop.isRemoved(name, named: named) {
                lines.append(line, to: &bytes)
            }
        }
        ForwardedHead.appendEnd(to: &bytes, chunked: false, version: .http11, via: via, closing: closing)
    }

    // The bytes compared, made once.
    private static let get = Array("GET ".utf8)
    private static let headMethod = Array("HEAD ".utf8)
    private static let versionSuffix = Array(" HTTP/1.1".utf8)
    private static let scheme = Array("http://".utf8)
    private static let slash = [UInt8(ascii: "/")]
    private static let host = Array("host".utf8)
    private static let contentLength = Array("content-length".utf8)
    private static let transferEncoding = Array("transfer-encoding".utf8)
    private static let connectionName = Array("connection".utf8)
}
