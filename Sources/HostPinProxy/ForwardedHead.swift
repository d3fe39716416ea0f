import HostPin

/// The heads the proxy sends on: an origin-form request to the origin, the origin's response to the
/// client, each without hop-by-hop fields (RFC 9110 §7.6.1) and with the proxy's `Via` (§7.6.3).
enum ForwardedHead {
    /// The request for the origin: origin-form request line (RFC 9112 §3.2.1) in HTTP/1.1, `Host` set
    /// to the absolute-form target's authority (§3.2.2: a proxy replaces any received `Host`), the
    /// client's end-to-end fields after the `header` rules' `edits`, `Transfer-Encoding: chunked` when
    /// the body is chunked, `Via`, and `Connection: close` when `closing` (the client connection ends
    /// after this request, so the origin connection will not be kept for another).
    ///
    /// Edits change end-to-end fields only: rules cannot name `Host`, `Content-Length` or
    /// `Transfer-Encoding` (refused when they load), and a hop-by-hop field an edit adds is removed again,
    /// since it would speak for the proxy's own connection.
    static func request(_ head: RequestHead, authority: RequestTarget.Authority, path: String, via: String,
                        closing: Bool, edits: [HeaderEdit] = []) -> [UInt8] {
        guard edits.isEmpty else { return edited(head, authority: authority, path: path, via: via, closing: closing, edits: edits) }
        return copied(head, authority: authority, path: path, via: via, closing: closing)
    }

    /// The request without edits, its field lines copied from the head's own bytes (`RequestHead.bytes`)
    /// into one buffer sized up front: no `HeaderFields` is built or filtered per request. The parser
    /// checked those bytes (strict CRLF, a colon after each name, no folding), so each line is found by
    /// its CR and its colon, and the value is trimmed as ``HeadSyntax/fields(_:)`` trims it: the same head
    /// as ``edited(_:authority:path:via:closing:edits:)`` makes with no edit (`ForwardedHeadTests`).
    private static func copied(_ head: RequestHead, authority: RequestTarget.Authority, path: String, via: String,
                               closing: Bool) -> [UInt8] {
        let received = head.bytes
        let named = HopByHop.named(in: head.fields)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(received.count + path.utf8.count + authority.text.utf8.count + via.utf8.count + 96)
        bytes.append(contentsOf: head.method.utf8)
        bytes.append(HeadSyntax.space)
        bytes.append(contentsOf: path.utf8)
        appendHostLine(authority, to: &bytes)
        // Past the request line; the empty line ends the loop (the parser saw it).
        var start = (received.firstIndex(of: HeadSyntax.cr) ?? received.count) + 2
        while start < received.count, let end = received[start...].firstIndex(of: HeadSyntax.cr), end > start {
            let colon = received[start..<end].firstIndex(of: HeadSyntax.colon) ?? end
            let name = received[start..<colon]
            if !HeadSyntax.equalsIgnoringASCIICase(name, lowercased: hostBytes), !HopByHop.isRemoved(name, named: named) {
                bytes.append(contentsOf: name)
                bytes.append(HeadSyntax.colon)
                bytes.append(HeadSyntax.space)
                bytes.append(contentsOf: HeadSyntax.trimmingWhitespace(received[(colon + 1)..<end]))
                bytes.append(HeadSyntax.cr)
                bytes.append(HeadSyntax.lf)
            }
            start = end + 2
        }
        appendEnd(to: &bytes, chunked: head.framing == .chunked, version: head.version, via: via, closing: closing)
        return bytes
    }

    /// Ends an origin-form request line (` HTTP/1.1`) and appends the `Host` line the proxy sets.
    static func appendHostLine(_ authority: RequestTarget.Authority, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: " HTTP/1.1\r\nHost: ".utf8)
        bytes.append(contentsOf: authority.text.utf8)
        bytes.append(HeadSyntax.cr)
        bytes.append(HeadSyntax.lf)
    }

    /// `host` as bytes, for ``copied(_:authority:path:via:closing:)``.
    private static let hostBytes = Array("host".utf8)

    /// The request with the `header` rules' `edits` applied to its fields (as strings: an edit may add,
    /// replace or remove any end-to-end field).
    static func edited(_ head: RequestHead, authority: RequestTarget.Authority, path: String, via: String,
                       closing: Bool, edits: [HeaderEdit]) -> [UInt8] {
        var fields = HeaderFields()
        fields.append(name: "Host", value: authority.text)
        var endToEnd = HopByHop.removed(from: head.fields, alsoRemoving: hostName)
        if !edits.isEmpty {
            var edited = HeaderFields()
            for field in HeaderEdit.apply(edits, to: endToEnd.map { ($0.name, $0.value) }) {
                edited.append(name: field.name, value: field.value)
            }
            endToEnd = edited.removing(HopByHop.alwaysRemoved.union(hostName))
        }
        for field in endToEnd {
            fields.append(name: field.name, value: field.value)
        }
        if head.framing == .chunked { fields.append(name: "Transfer-Encoding", value: "chunked") }
        fields.append(name: "Via", value: "\(head.version == .http10 ? "1.0" : "1.1") \(via)")
        if closing { fields.append(name: "Connection", value: "close") }
        return assemble(fields) { bytes in
            bytes.append(contentsOf: head.method.utf8)
            bytes.append(HeadSyntax.space)
            bytes.append(contentsOf: path.utf8)
            bytes.append(contentsOf: " HTTP/1.1\r\n".utf8)
        }
    }

    /// `Host`, which the proxy sets itself: one set for every request, not a literal built per request.
    private static let hostName: Set<String> = ["host"]

    /// The response for the client: the origin's status, its end-to-end fields, the framing this hop
    /// uses, `Via`, and `Connection: close` when the client connection ends after it. The origin's field
    /// lines are copied from its head's bytes (``FieldLines``), in one buffer sized up front.
    static func response(_ response: ResponseHead, coding: BodyRelay.OutputCoding, closing: Bool, via: String) -> [UInt8] {
        var bytes: [UInt8] = []
        appendResponse(response, coding: coding, closing: closing, via: via, to: &bytes)
        return bytes
    }

    /// ``response(_:coding:closing:via:)`` appended to `bytes` (a keep-alive relay's buffer, kept across
    /// requests, instead of an array per response).
    static func appendResponse(_ response: ResponseHead, coding: BodyRelay.OutputCoding, closing: Bool, via: String,
                               to bytes: inout [UInt8]) {
        let lines = response.lines
        let named = HopByHop.named(in: response.controlFields)
        bytes.reserveCapacity(bytes.count + lines.bytes.count + 64 + via.utf8.count)
        bytes.append(contentsOf: "HTTP/1.1 ".utf8)
        // Three digits (the parser took 100-999), written as such rather than through a string.
        bytes.append(UInt8(0x30 + response.status / 100))
        bytes.append(UInt8(0x30 + response.status / 10 % 10))
        bytes.append(UInt8(0x30 + response.status % 10))
        bytes.append(HeadSyntax.space)
        bytes.append(contentsOf: response.reason.utf8)
        bytes.append(HeadSyntax.cr)
        bytes.append(HeadSyntax.lf)
        for line in lines.lines where !HopByHop.isRemoved(lines.bytes[line.name], named: named) {
            lines.append(line, to: &bytes)
        }
        appendEnd(to: &bytes, chunked: coding == .chunked, version: response.version, via: via, closing: closing)
    }

    /// The lines every head the proxy forwards from bytes ends with: `Transfer-Encoding: chunked` when
    /// this hop is chunked, `Via` with the received message's version, `Connection: close` when
    /// `closing`, and the empty line.
    static func appendEnd(to bytes: inout [UInt8], chunked: Bool, version: HTTPVersion, via: String,
                                  closing: Bool) {
        if chunked { bytes.append(contentsOf: "Transfer-Encoding: chunked\r\n".utf8) }
        bytes.append(contentsOf: (version == .http10 ? "Via: 1.0 " : "Via: 1.1 ").utf8)
        bytes.append(contentsOf: via.utf8)
        bytes.append(HeadSyntax.cr)
        bytes.append(HeadSyntax.lf)
        if closing { bytes.append(contentsOf: "Connection: close\r\n".utf8) }
        bytes.append(HeadSyntax.cr)
        bytes.append(HeadSyntax.lf)
    }

    /// A head in one buffer sized up front: the start line `startLine` appends, the field lines, the
    /// empty line (this runs twice per request; concatenating arrays cost an allocation per part).
    private static func assemble(_ fields: HeaderFields, startLine: (inout [UInt8]) -> Void) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128 + fields.wireSizeEstimate)
        startLine(&bytes)
        fields.appendWireBytes(to: &bytes)
        bytes.append(HeadSyntax.cr)
        bytes.append(HeadSyntax.lf)
        return bytes
    }
}
