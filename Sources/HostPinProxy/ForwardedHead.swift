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
        var fields = HeaderFields()
        fields.append(name: "Host", value: authority.text)
        var endToEnd = HopByHop.removed(from: head.fields, alsoRemoving: ["host"])
        if !edits.isEmpty {
            var edited = HeaderFields()
            for field in HeaderEdit.apply(edits, to: endToEnd.map { ($0.name, $0.value) }) {
                edited.append(name: field.name, value: field.value)
            }
            endToEnd = edited.removing(HopByHop.alwaysRemoved.union(["host"]))
        }
        for field in endToEnd {
            fields.append(name: field.name, value: field.value)
        }
        if head.framing == .chunked { fields.append(name: "Transfer-Encoding", value: "chunked") }
        fields.append(name: "Via", value: "\(head.version == .http10 ? "1.0" : "1.1") \(via)")
        if closing { fields.append(name: "Connection", value: "close") }
        return Array("\(head.method) \(path) HTTP/1.1\r\n".utf8) + fields.wireBytes + [HeadSyntax.cr, HeadSyntax.lf]
    }

    /// The response for the client: the origin's status, its end-to-end fields, the framing this hop
    /// uses, `Via`, and `Connection: close` when the client connection ends after it.
    static func response(_ response: ResponseHead, coding: BodyRelay.OutputCoding, closing: Bool, via: String) -> [UInt8] {
        var fields = HopByHop.removed(from: response.fields)
        if coding == .chunked { fields.append(name: "Transfer-Encoding", value: "chunked") }
        fields.append(name: "Via", value: "\(response.version == .http10 ? "1.0" : "1.1") \(via)")
        if closing { fields.append(name: "Connection", value: "close") }
        return Array("HTTP/1.1 \(response.status) \(response.reason)\r\n".utf8) + fields.wireBytes
            + [HeadSyntax.cr, HeadSyntax.lf]
    }
}
