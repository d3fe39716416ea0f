/// A special-use domain (the IANA registry RFC 6761 set up, and the zones RFC 6303 says every resolver
/// serves itself): a zone whose names HostPin answers on the host, with no query to any upstream.
///
/// Without this table a name such as `printer.local` or `1.1.168.192.in-addr.arpa` went to the trusted
/// upstreams, which may be a public DoH provider: it learnt the LAN's printer names and private
/// addresses, and `_dns.resolver.arpa` (RFC 9462) told a client to bypass HostPin. Every resolution
/// (``ResolutionOutcome/literal(for:family:)``, before the cache) and the DNS stub's plan consult it first.
///
/// `test` and `example` (RFC 6761 §6.2, §6.5) are special-use names too but are **not** in the table: they
/// stay with the upstreams, because test labs (this project's among them) serve them from their own
/// authoritative servers. Neither is `in-addr.arpa` of 100.64/10 (RFC 7793, after RFC 6303).
///
/// Only the zones with ``mayBeRouted`` (the RFC 6303 reverse zones and `home.arpa`) may ever be sent to a
/// resolver on the LAN, by a route (split DNS) that names them; `localhost`, `invalid`, `onion`, `local`
/// and `resolver.arpa` never leave the host.
public struct SpecialUseName: Sendable, Hashable, CustomStringConvertible {
    /// How the names of the zone are answered.
    public enum Answer: Sendable, Hashable {
        /// The loopback addresses for A and AAAA, NODATA for any other type (RFC 6761 §6.3): `localhost`,
        /// answered by ``Resolution/literal(for:family:)``.
        case loopback
        /// Every name below the zone: NXDOMAIN or NODATA, the zone's synthetic SOA record in the
        /// authority section. The zone's own name (its apex) has no records but its SOA: NODATA.
        case negative(NegativeAnswer.Kind)
    }

    /// The zone: lower case, no trailing dot, e.g. `168.192.in-addr.arpa`.
    public let zone: String
    /// How its names are answered.
    public let answer: Answer
    /// Whether a later split-DNS route may send the zone to a resolver on the LAN (which may serve its
    /// reverse names or `home.arpa`); never to a public upstream. `false`: the names never leave the host.
    public let mayBeRouted: Bool
    /// The RFC and section that reserve the zone, e.g. `RFC 6303 §4.1`.
    public let reference: String
    /// `zone`'s octets, for matching without building strings.
    private let zoneOctets: [UInt8]

    init(_ zone: String, _ answer: Answer, mayBeRouted: Bool, _ reference: String) {
        self.zone = zone
        self.answer = answer
        self.mayBeRouted = mayBeRouted
        self.reference = reference
        zoneOctets = Array(zone.utf8)
    }

    /// `168.192.in-addr.arpa (RFC 6303 §4.1)`.
    public var description: String { "\(zone) (\(reference))" }

    /// The TTL of the synthetic SOA record, in seconds, and so of the negative answers (RFC 2308 §5): a
    /// minute, short enough that a client soon sees a route added later.
    public static let soaTTL: UInt32 = 60

    /// The zone's synthetic SOA record, as RFC 6303 §3 writes it (MNAME the zone itself, RNAME
    /// `nobody.invalid`, serial 1, refresh 3600, retry 1200, expire 604800, minimum 10800) with TTL
    /// ``soaTTL``: the negative answers last min(TTL, MINIMUM) = 60 s.
    public var soa: SOARecord {
        SOARecord(zone: zone, ttl: Self.soaTTL, primaryServer: zone, mailbox: "nobody.invalid", serial: 1,
                  refresh: 3600, retry: 1200, expire: 604_800, minimum: 10_800)
    }

    /// Whether `name` is the zone's own name rather than a name below it.
    ///
    /// - Parameter name: A name ``entry(containing:)`` matched to this zone.
    public func isApex(_ name: String) -> Bool { name.utf8.count == zoneOctets.count }

    /// The answer's kind for `name` in this zone, when it is negative: NODATA at the apex, else the zone's;
    /// `nil` for ``Answer/loopback`` (addresses, or NODATA for other types: the caller knows the type).
    public func negativeKind(for name: String) -> NegativeAnswer.Kind? {
        guard case .negative(let kind) = answer else { return nil }
        return isApex(name) ? .nodata : kind
    }

    /// The table's entry whose zone holds `name`, the most specific one; `nil` for an ordinary name.
    ///
    /// - Parameter name: A name in presentation form (RFC 1035 §5.1) without the root's final dot, in any
    ///   letter case: ``HostName/text``, or a DNS question's name as ldns writes it (an escaped dot, `\.`,
    ///   is no label boundary).
    public static func entry(containing name: String) -> SpecialUseName? {
        var name = name
        return name.withUTF8 { octets in
            // Every resolution, cache hits included, asks: only the zones under the name's last label are
            // tried (none for `com`, `net` or `test`, one lengths-first comparison of each of five labels).
            var start = octets.count
            while start > 0, octets[start - 1] != UInt8(ascii: ".") { start -= 1 }
            let label = UnsafeBufferPointer(rebasing: octets[start...])
            guard let group = byTopLabel.first(where: { Self.equalFoldingCase(label, $0.label) }) else { return nil }
            var best: SpecialUseName?
            for entry in group.entries where entry.holds(octets) {
                if entry.zoneOctets.count > best?.zoneOctets.count ?? 0 { best = entry }
            }
            return best
        }
    }

    /// Whether `octets` spell `label` (lower case), ASCII letters in any case.
    private static func equalFoldingCase(_ octets: UnsafeBufferPointer<UInt8>, _ label: [UInt8]) -> Bool {
        guard octets.count == label.count else { return false }
        for (octet, expected) in zip(octets, label) where Self.folded(octet) != expected { return false }
        return true
    }

    /// `octet` with an ASCII capital letter made lower case.
    private static func folded(_ octet: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(octet) ? octet | 0x20 : octet
    }

    /// Whether `name` is `zone` or ends in `.zone` at a label boundary, ASCII letters in any case.
    private func holds(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        let start = name.count - zoneOctets.count
        guard start >= 0 else { return false }
        for (offset, octet) in zoneOctets.enumerated() {
            guard Self.folded(name[start + offset]) == octet else { return false }
        }
        if start == 0 { return true }
        guard name[start - 1] == UInt8(ascii: ".") else { return false }
        // The dot separates labels unless it is escaped: an even run of backslashes before it.
        var backslashes = 0
        var index = start - 2
        while index >= 0, name[index] == UInt8(ascii: "\\") {
            backslashes += 1
            index -= 1
        }
        return backslashes % 2 == 0
    }

    /// The table's entries grouped by their zone's last label (`localhost`, `invalid`, `local`, `onion`,
    /// `arpa`), in table order.
    private static let byTopLabel: [(label: [UInt8], entries: [SpecialUseName])] = {
        var groups: [(label: [UInt8], entries: [SpecialUseName])] = []
        for entry in table {
            let label = Array(entry.zoneOctets.split(separator: UInt8(ascii: ".")).last ?? [])
            if let index = groups.firstIndex(where: { $0.label == label }) {
                groups[index].entries.append(entry)
            } else {
                groups.append((label, [entry]))
            }
        }
        return groups
    }()

    /// The zones, in the registry's order. One row each; a name in two (`in-addr.arpa` rows do not nest)
    /// takes the longer zone.
    public static let table: [SpecialUseName] = [
        SpecialUseName("localhost", .loopback, mayBeRouted: false, "RFC 6761 §6.3"),
        SpecialUseName("invalid", .negative(.nxdomain), mayBeRouted: false, "RFC 6761 §6.4"),
        SpecialUseName("local", .negative(.nxdomain), mayBeRouted: false, "RFC 6762 §3, §22.1"),
        SpecialUseName("onion", .negative(.nxdomain), mayBeRouted: false, "RFC 7686 §2"),
        SpecialUseName("home.arpa", .negative(.nxdomain), mayBeRouted: true, "RFC 8375 §4"),
        SpecialUseName("resolver.arpa", .negative(.nodata), mayBeRouted: false, "RFC 9462 §6.1, §6.4"),
    ] + reverseZones

    /// RFC 6303 §4: the reverse zones of private, loopback, link-local, documentation and "this network"
    /// addresses, which every resolver answers itself (NXDOMAIN) rather than asking the public tree.
    private static let reverseZones: [SpecialUseName] = {
        func reverse(_ zone: String, _ section: String) -> SpecialUseName {
            SpecialUseName(zone, .negative(.nxdomain), mayBeRouted: true, "RFC 6303 §\(section)")
        }
        let zeros = Array(repeating: "0", count: 31).joined(separator: ".")
        return [reverse("10.in-addr.arpa", "4.1")]
            + (16...31).map { reverse("\($0).172.in-addr.arpa", "4.1") }
            + [
                reverse("168.192.in-addr.arpa", "4.1"),
                reverse("0.in-addr.arpa", "4.2"),
                reverse("127.in-addr.arpa", "4.2"),
                reverse("254.169.in-addr.arpa", "4.2"),
                reverse("2.0.192.in-addr.arpa", "4.2"),
                reverse("100.51.198.in-addr.arpa", "4.2"),
                reverse("113.0.203.in-addr.arpa", "4.2"),
                reverse("255.255.255.255.in-addr.arpa", "4.2"),
                reverse("0.\(zeros).ip6.arpa", "4.3"),
                reverse("1.\(zeros).ip6.arpa", "4.3"),
                reverse("d.f.ip6.arpa", "4.4"),
                reverse("8.e.f.ip6.arpa", "4.5"),
                reverse("9.e.f.ip6.arpa", "4.5"),
                reverse("a.e.f.ip6.arpa", "4.5"),
                reverse("b.e.f.ip6.arpa", "4.5"),
                reverse("8.b.d.0.1.0.0.2.ip6.arpa", "4.6"),
            ]
    }()
}
