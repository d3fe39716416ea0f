import CLDNS

/// A question of any record type that ``TrustedResolver/forward(_:)`` asks the trusted upstreams
/// (RFC 1035 §4.1.2), class IN: what the DNS stub sends on for MX, TXT, SRV, HTTPS, PTR, … and for names
/// that are no host names.
///
/// Two questions are equal when they ask the same: names compare without regard to letter case.
public struct ForwardedQuestion: Sendable, Hashable, CustomStringConvertible {
    /// The name in presentation form (RFC 1035 §5.1: odd octets escaped as ldns writes them), lower case,
    /// without the root's final dot; empty for the root itself.
    public let name: String
    /// The record TYPE asked for (RFC 1035 §3.2.2), as on the wire: 15 MX, 16 TXT, 33 SRV, 65 HTTPS, ….
    public let type: UInt16

    /// Reads `name` with ldns.
    ///
    /// - Parameters:
    ///   - name: A domain name in presentation form, in any letter case, with or without the final dot;
    ///     `.` or the empty string for the root.
    ///   - type: The record TYPE asked for.
    /// - Returns: `nil` when `name` is no domain name (a label over 63 octets, a name over 255, a bad
    ///   escape, an empty label).
    public init?(name: String, type: UInt16) {
        var absolute = name
        // The final dot is the root label's separator unless it is escaped ("a\." ends in a label "a.").
        let backslashes = absolute.dropLast().reversed().prefix { $0 == "\\" }.count
        if !absolute.hasSuffix(".") || backslashes % 2 == 1 { absolute += "." }
        guard let rdf = ldns_dname_new_frm_str(absolute) else { return nil }
        defer { ldns_rdf_deep_free(rdf) }
        // Written back as every reply's names are read, so the reply's question compares equal.
        guard let canonical = DNSReply.name(rdf) else { return nil }
        self.name = canonical
        self.type = type
    }

    public var description: String { "\(name.isEmpty ? "." : name) TYPE\(type)" }

    /// The question a reply must carry, as ``DNSReply`` reads it.
    var replyQuestion: DNSReply.Question {
        DNSReply.Question(name: name, type: RecordType(rawValue: type), dnsClass: DNSReply.internetClass)
    }

    /// The name as ldns reads it back for a query: absolute, so the root is `.`.
    var absoluteName: String { name.isEmpty ? "." : name + "." }
}
