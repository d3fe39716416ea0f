/// Removing connection-specific fields before a message is forwarded (RFC 9110 §7.6.1).
enum HopByHop {
    /// Fields that apply to one connection only: `Connection` and the fields RFC 9110 §7.6.1 lists
    /// (`Proxy-Connection`, `Keep-Alive`, `TE`, `Transfer-Encoding`, `Upgrade`), plus `Trailer` (it
    /// describes this hop's chunked coding), and the proxy's own authentication fields
    /// (`Proxy-Authorization`, `Proxy-Authenticate`, RFC 9110 §11.7), which are meant for this proxy.
    static let alwaysRemoved: Set<String> = [
        "connection", "proxy-connection", "keep-alive", "te", "transfer-encoding", "upgrade", "trailer",
        "proxy-authorization", "proxy-authenticate",
    ]

    /// `fields` without the hop-by-hop fields: those above, and every field named in `Connection`
    /// (`Connection: close, X-Private` removes `X-Private`) except `Content-Length`: the proxy relays the
    /// body with the length it read, so the next hop must read that length too, or it would take body
    /// bytes for the next message (request smuggling).
    static func removed(from fields: HeaderFields, alsoRemoving extra: Set<String> = []) -> HeaderFields {
        // Names compared in place, no sets built: this runs for every message, and most responses carry a
        // `Connection` field (`keep-alive`, `close`).
        // The fixed names as byte tables, lengths first: iterating the set of strings retained each
        // member per field line (with `Host`, the request side's largest source of retains).
        let named = named(in: fields)
        return fields.removing { name in
            let bytes = name.utf8
            return alwaysRemovedBytes.contains { $0.count == bytes.count && bytes.elementsEqual($0, by: HeadSyntax.sameIgnoringASCIICase) }
                || named.contains(where: name.equalsIgnoringASCIICase) || extra.contains(where: name.equalsIgnoringASCIICase)
        }
    }

    /// The field names `fields`' `Connection` lists, but `Content-Length` (see ``removed(from:alsoRemoving:)``)
    /// and those removed anyway (``alwaysRemoved``: `Connection: keep-alive`, the common one, names
    /// nothing more, and makes no string).
    static func named(in fields: HeaderFields) -> [String] {
        var names: [String] = []
        _ = fields.forEachMember(of: "Connection") { member in
            let removedAnyway = alwaysRemovedBytes.contains { fixed in
                member.count == fixed.count && member.elementsEqual(fixed, by: HeadSyntax.sameIgnoringASCIICase)
            }
            if !member.isEmpty, !removedAnyway, !member.elementsEqual(contentLength, by: HeadSyntax.sameIgnoringASCIICase) {
                names.append(String(Substring(member)))
            }
            return true
        }
        return names
    }

    private static let contentLength = Array("content-length".utf8)

    /// Whether a field line named `name` (its bytes as received) is hop-by-hop: one of ``alwaysRemoved``
    /// or of `named` (``named(in:)``), compared without case.
    static func isRemoved(_ name: ArraySlice<UInt8>, named: [String]) -> Bool {
        alwaysRemovedBytes.contains { HeadSyntax.equalsIgnoringASCIICase(name, lowercased: $0) }
            || named.contains { name.elementsEqual($0.utf8, by: HeadSyntax.sameIgnoringASCIICase) }
    }

    /// ``alwaysRemoved`` as bytes, compared with every forwarded field line's name (as strings in a set,
    /// that comparison was 0.8 % of a busy proxy's time).
    private static let alwaysRemovedBytes = alwaysRemoved.map { Array($0.utf8) }
}
