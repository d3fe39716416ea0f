import HostPin

/// Formats a resolution as `dig +noall +answer` does: one answer-section line per record, CNAMEs first
/// (each with its own TTL), then the address records, owner names absolute with a trailing dot.
///
/// ```
/// alias.example.test. 5 IN CNAME www.example.test.
/// www.example.test. 3600 IN A 127.0.0.10
/// ```
enum DigFormatter {
    /// The answer lines for `resolution`, in chain order.
    static func lines(for resolution: Resolution) -> [String] {
        let cnames = resolution.cnames.map { record in
            "\(absolute(record.alias)) \(record.ttl) IN CNAME \(absolute(record.target))"
        }
        let owner = absolute(resolution.canonicalName)
        let addresses = resolution.addresses.map { record in
            "\(owner) \(record.ttl) IN \(record.address.family == .v4 ? "A" : "AAAA") \(record.address)"
        }
        return cnames + addresses
    }

    /// `name` with exactly one trailing dot (names inside HostPin are kept relative).
    static func absolute(_ name: String) -> String {
        name.hasSuffix(".") ? name : name + "."
    }
}
