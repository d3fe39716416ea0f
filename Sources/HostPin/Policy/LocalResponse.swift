import Foundation

/// A response a `respond` rule gives, built without any network.
public struct LocalResponse: Sendable {
    /// The HTTP status.
    public let status: Int
    /// The header fields in order: the rule's own, then `Content-Type`, `Content-Length` and `ETag` as
    /// they apply.
    public let headers: [(name: String, value: String)]
    /// The body: empty for `HEAD` and 304 (RFC 9110 §9.3.2, §15.4.5).
    public let body: Data
    public let rule: RuleReference
}

/// What a `respond` rule answers, read from its file or inline text at load time: the status, the rule's
/// header fields with `Content-Type`, the body, and its entity tag when the rule asks for one.
struct ResponseTemplate: Sendable {
    let status: Int
    let headers: [(name: String, value: String)]
    let body: Data
    /// A strong entity tag with its quotes (RFC 9110 §8.8.3), or `nil`.
    let entityTag: String?

    init(status: Int, headers: [(name: String, value: String)], body: Data, withEntityTag: Bool) {
        self.status = status
        self.headers = headers
        self.body = body
        entityTag = withEntityTag ? Self.entityTag(of: body) : nil
    }

    /// The response to `request`: without a body for `HEAD`; a 304 with the tag only when a 200
    /// response's tag is in `If-None-Match` of a `GET` or `HEAD` (RFC 9110 §13.1.2, weak comparison).
    func response(to request: PolicyRequest, rule: RuleReference) -> LocalResponse {
        let method = request.method.uppercased()
        let reading = method == "GET" || method == "HEAD"
        if let entityTag, status == 200, reading, let condition = request.value(of: "If-None-Match"),
           Self.condition(condition, matches: entityTag) {
            return LocalResponse(status: 304, headers: [("ETag", entityTag)], body: Data(), rule: rule)
        }
        var fields = headers
        fields.append(("Content-Length", String(body.count)))
        if let entityTag { fields.append(("ETag", entityTag)) }
        return LocalResponse(status: status, headers: fields, body: method == "HEAD" ? Data() : body, rule: rule)
    }

    /// Whether an `If-None-Match` value (`*` or a list of entity tags) names `entityTag`.
    private static func condition(_ value: String, matches entityTag: String) -> Bool {
        let tags = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        return tags.contains { $0 == "*" || ($0.hasPrefix("W/") ? String($0.dropFirst(2)) : $0) == entityTag }
    }

    /// `"<FNV-1a 64 of the body, hex>-<length, hex>"`: the same bytes always give the same tag, so it
    /// survives a reload of unchanged rules.
    private static func entityTag(of body: Data) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in body {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return "\"\(String(hash, radix: 16))-\(String(body.count, radix: 16))\""
    }
}
