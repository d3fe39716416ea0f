import Foundation

/// The keys a chain of trust starts from (RFC 4033 §5, RFC 4035 §4.4): per zone, DS records (digests of
/// its key-signing keys) or DNSKEY records, as Unbound's `val_anchor` keeps them.
public struct TrustAnchors: Sendable, Hashable {
    /// One zone's anchor records: DS and DNSKEY records whose owner is `zone`.
    package struct Anchor: Sendable, Hashable {
        package let zone: WireName
        package var ds: [DNSSECRecord]
        package var dnskeys: [DNSSECRecord]

        /// Whether a chain can start here: a DS HostPin checks (``DSMatch/usable(_:)``) or a DNSKEY of a
        /// supported algorithm.
        var hasSupportedRecord: Bool {
            !DSMatch.usable(ds).isEmpty
                || dnskeys.contains { DNSKEYData($0.rdata).map { SignatureCheck.isSupported(algorithm: $0.algorithm) } ?? false }
        }
    }

    package private(set) var anchors: [WireName: Anchor]

    /// Anchors made of `records`, each DS or DNSKEY joining its owner's anchor; other types are left out.
    package init(records: [DNSSECRecord]) {
        var anchors: [WireName: Anchor] = [:]
        for record in records where record.type == DNSSECRecord.Kind.ds || record.type == DNSSECRecord.Kind.dnskey {
            var anchor = anchors[record.owner] ?? Anchor(zone: record.owner, ds: [], dnskeys: [])
            if record.type == DNSSECRecord.Kind.ds { anchor.ds.append(record) } else { anchor.dnskeys.append(record) }
            anchors[record.owner] = anchor
        }
        self.anchors = anchors
    }

    /// The closest anchor at or above `name` (the one a chain to `name` starts from), or `nil` when no
    /// anchor covers it: the answer is then indeterminate (RFC 4033 §5).
    package func closest(to name: WireName) -> Anchor? {
        var candidate: WireName? = name
        while let zone = candidate {
            if let anchor = anchors[zone] { return anchor }
            candidate = zone.parent
        }
        return nil
    }

    /// The IANA root zone's key-signing keys as DS records: KSK-2017 (key tag 20326) and KSK-2024
    /// (key tag 38696), both algorithm 8 with SHA-256 digests — the lines of Debian's
    /// `dns-root-data` `root.ds` (https://data.iana.org/root-anchors/root-anchors.xml).
    public static let ianaRoot: TrustAnchors = {
        let lines = [
            ". IN DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D",
            ". IN DS 38696 8 2 683D2D0ACB8C9B712A1948B27F741219298D0A450D612C483AF444A4C0FB2B16",
        ]
        return TrustAnchors(records: lines.compactMap { DNSSECRecord(presentation: $0) })
    }()

    /// Reads a trust-anchor file: one DS or DNSKEY record a line in zone-file presentation form, as
    /// Debian's `dns-root-data` writes `root.ds` and `root.key` (`. IN DS 20326 8 2 E06D…`, a TTL
    /// optional, relative names taken from the root); blank lines and lines starting with `;` are skipped.
    /// Other record types on a line of their own are ignored (a file of a zone's apex may hold its SOA);
    /// `$ORIGIN`/`$TTL` directives are not read (the dns-root-data files have none).
    ///
    /// - Parameter path: The file, at most 1 MiB.
    /// - Throws: ``TrustAnchorError``: unreadable (a directory included), empty, no DS or DNSKEY line,
    ///   the number of the first line ldns cannot read as an IN record, or a zone none of whose records
    ///   HostPin can check (every DS of an unsupported algorithm or digest type, every DNSKEY of an
    ///   unsupported algorithm): such a zone would be insecure (RFC 4035 §5.2), validation silently off
    ///   under it, so the file is refused (Unbound only warns).
    public static func load(path: String) throws(TrustAnchorError) -> TrustAnchors {
        let data: Data
        do { data = try BoundedFile.contents(of: path, limit: 1 << 20) } catch { throw .unreadable(path: path, error) }
        var records: [DNSSECRecord] = []
        var sawLine = false
        for (index, rawLine) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix(";") { continue }
            sawLine = true
            guard let record = DNSSECRecord(presentation: line), record.dnsClass == 1 else {
                throw .badLine(path: path, line: index + 1, text: String(line.prefix(80)))
            }
            if let (field, value, bound) = Self.truncatedField(line, record) {
                throw .fieldOutOfRange(path: path, line: index + 1, field: field, value: value, maximum: bound)
            }
            records.append(record)
        }
        guard sawLine else { throw .empty(path: path) }
        let anchors = TrustAnchors(records: records)
        guard !anchors.anchors.isEmpty else { throw .noAnchorRecord(path: path) }
        let zones = anchors.anchors.values.sorted { $0.zone.description < $1.zone.description }
        if let unusable = zones.first(where: { !$0.hasSupportedRecord }) {
            throw .noSupportedAnchor(path: path, zone: unusable.zone.description)
        }
        return anchors
    }

    /// The first of a DS's or DNSKEY's numeric fields (key tag, algorithm, digest type; flags, protocol,
    /// algorithm: RFC 4034 §5.1, §2.1) whose decimal text in `line` is not what ldns read into `record`,
    /// with its name, the text and the field's largest value. ldns keeps only the low octet of an
    /// algorithm written `269`, which would read as 13; written as a mnemonic (`RSASHA256`) a field is
    /// not compared. `nil` when every one fits, and for other types.
    private static func truncatedField(_ line: String, _ record: DNSSECRecord) -> (String, String, Int)? {
        let names: [(String, Int)]
        switch record.type {
        case 43: names = [("key tag", 0xFFFF), ("algorithm", 0xFF), ("digest type", 0xFF)]
        case 48: names = [("flags", 0xFFFF), ("protocol", 0xFF), ("algorithm", 0xFF)]
        default: return nil
        }
        let tokens = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        let typeName = record.type == 43 ? "DS" : "DNSKEY"
        // The type is the first token naming it after the owner (a TTL and the class may come between).
        guard let typeIndex = tokens.dropFirst().firstIndex(where: { $0.uppercased() == typeName }), record.rdata.count >= 4 else {
            return nil
        }
        let values = [Int(record.rdata[0]) << 8 | Int(record.rdata[1]), Int(record.rdata[2]), Int(record.rdata[3])]
        for (offset, (name, bound)) in names.enumerated() {
            let position = typeIndex + 1 + offset
            guard position < tokens.count, tokens[position].allSatisfy(\.isASCII), tokens[position].allSatisfy(\.isNumber) else { continue }
            let text = tokens[position]
            if Int(text) != values[offset] { return (name, String(text), bound) }
        }
        return nil
    }

    /// The anchors of several files together (a repeated `--trust-anchor`), in the order given.
    ///
    /// - Throws: The first file's ``TrustAnchorError``.
    public static func load(paths: [String]) throws(TrustAnchorError) -> TrustAnchors {
        var records: [DNSSECRecord] = []
        for path in paths {
            for anchor in try load(path: path).anchors.values { records += anchor.ds + anchor.dnskeys }
        }
        return TrustAnchors(records: records)
    }
}
