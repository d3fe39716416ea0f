import HostPin

/// Formats a resolution as `dig +noall +answer` does: one answer-section line per record, CNAMEs first
/// (each with its own TTL), then the address records, owner names absolute with a trailing dot.
///
/// ```
/// alias.example.test. 5 IN CNAME www.example.test.
/// www.example.test. 3600 IN A 127.0.0.10
/// ```
///
/// A cached answer's TTLs are what is left of them (``RemainingTTL``), as dig shows a caching resolver's.
///
/// An answer that is not a trusted upstream's current one ends each line with a zone-file comment
/// naming its source: `; stale` (served from the cache after its TTL because no upstream answered;
/// the TTLs are the stale TTL), `; untrusted` (the opted-in untrusted fallback), `; pinned` (a rule's
/// addresses). Answers from an upstream, from the cache while fresh, and for IP literals carry none.
/// A validated answer ends with one more line, its DNSSEC status (``dnssecLine(for:)``).
enum DigFormatter {
    /// The answer lines for `resolution`, in chain order, each TTL less `age`, the whole seconds the answer
    /// has been cached (``HostPin/ResolutionOutcome/age``; 0 for one just received), then its DNSSEC line
    /// when it was validated.
    static func lines(for resolution: Resolution, age: UInt32) -> [String] {
        let marker = self.marker(for: resolution.source)
        let cnames = resolution.cnames.map { record in
            "\(absolute(record.alias)) \(RemainingTTL.of(record.ttl, age: age)) IN CNAME \(absolute(record.target))\(marker)"
        }
        let owner = absolute(resolution.canonicalName)
        let addresses = resolution.addresses.map { record in
            "\(owner) \(RemainingTTL.of(record.ttl, age: age)) IN \(record.address.family == .v4 ? "A" : "AAAA") \(record.address)\(marker)"
        }
        return cnames + addresses + (dnssecLine(for: resolution.dnssec).map { [$0] } ?? [])
    }

    /// The trailing comment that names `source`, with its leading space; empty for the sources that
    /// need none.
    static func marker(for source: Resolution.Source) -> String {
        switch source {
        case .upstream, .cache, .literal, .negativeCache, .specialUse, .sharedCache: ""
        case .stale: " ; stale"
        case .untrusted: " ; untrusted"
        case .pinned: " ; pinned"
        }
    }

    /// The line printed after a name's records for what DNSSEC validation found, as `delv` prints
    /// `; fully validated`: `; secure`, `; insecure`, `; indeterminate` (no trust anchor covers the name),
    /// or `; bogus (report mode): REASON` (which RRset, which key, what was wrong); `nil` when the answer
    /// was not validated (`--dnssec off`, IP literals, pins, the untrusted fallback).
    static func dnssecLine(for status: DNSSECStatus?) -> String? {
        switch status {
        case nil: nil
        case .secure: "; secure"
        case .insecure: "; insecure"
        case .indeterminate: "; indeterminate"
        case .bogus(let reason): "; bogus (report mode): \(reason)"
        }
    }

    /// `name` with exactly one trailing dot (names inside HostPin are kept relative).
    static func absolute(_ name: String) -> String {
        name.hasSuffix(".") ? name : name + "."
    }
}
