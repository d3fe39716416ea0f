import Foundation
import HostPin
import HostPinTestSupport
import Testing

/// The signed lab world (zones/signed/README.md) gives, for every name, the DNSSEC verdict it was built
/// to give — checked with delv, the reference validator (BIND 9), against the lab's own trust anchor. The
/// validator HostPin grows must agree with this table row by row; this suite holds the reference itself
/// (a key or a signature made wrong by scripts/lab-sign would show here first).
@Suite struct SignedLabTests {
    /// What delv says of one query.
    enum Verdict: String, Sendable, CustomStringConvertible {
        case secure = "fully validated"
        case insecure = "unsigned answer"
        case secureNXDOMAIN = "ncache nxdomain, fully validated"
        case secureNODATA = "ncache nxrrset, fully validated"
        case bogus

        var description: String { rawValue }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let type: String
        let verdict: Verdict
        let reason: String?

        var testDescription: String { "\(name) \(type) → \(verdict)" }
    }

    static let rows: [Row] = [
        Row(name: "www.example.test", type: "A", verdict: .secure, reason: nil),
        Row(name: "x.wild.example.test", type: "A", verdict: .secure, reason: nil),
        Row(name: "www.test", type: "A", verdict: .secure, reason: nil),
        Row(name: "nx.example.test", type: "A", verdict: .secureNXDOMAIN, reason: nil),
        Row(name: "nx.test", type: "A", verdict: .secureNXDOMAIN, reason: nil),
        Row(name: "www.example.test", type: "TXT", verdict: .secureNODATA, reason: nil),
        Row(name: "www.test", type: "TXT", verdict: .secureNODATA, reason: nil),
        // Proofs under NSEC3 (test., optout.test.) and wildcard NODATA.
        Row(name: "www.unsigned.test", type: "A", verdict: .insecure, reason: nil),
        Row(name: "unsigned.test", type: "DS", verdict: .secureNODATA, reason: nil),
        Row(name: "www.child.optout.test", type: "A", verdict: .insecure, reason: nil),
        Row(name: "child.optout.test", type: "DS", verdict: .secureNODATA, reason: nil),
        Row(name: "www.optout.test", type: "A", verdict: .secure, reason: nil),
        Row(name: "www.optout.test", type: "TXT", verdict: .secureNODATA, reason: nil),
        // delv calls a denial whose next closer name an opt-out NSEC3 covers secure (here, at
        // child.optout.test DS and x.wild.optout.test TXT); HostPin, as Unbound, insecure (RFC 5155 §9.2;
        // docs/ARCHITECTURE.md).
        Row(name: "nx.optout.test", type: "A", verdict: .secureNXDOMAIN, reason: nil),
        Row(name: "x.wild.test", type: "A", verdict: .secure, reason: nil),
        Row(name: "a.b.wild.test", type: "A", verdict: .secure, reason: nil),
        Row(name: "x.wild.test", type: "TXT", verdict: .secureNODATA, reason: nil),
        Row(name: "x.wild.example.test", type: "TXT", verdict: .secureNODATA, reason: nil),
        // An expansion in an opt-out span is insecure for delv too; its wildcard NODATA secure (HostPin: insecure).
        Row(name: "x.wild.optout.test", type: "A", verdict: .insecure, reason: nil),
        Row(name: "x.wild.optout.test", type: "TXT", verdict: .secureNODATA, reason: nil),
        Row(name: "www.unsigned.example.test", type: "A", verdict: .insecure, reason: nil),
        Row(name: "modified.example.test", type: "A", verdict: .bogus, reason: "RRSIG failed to verify"),
        Row(name: "www.badds.example.test", type: "A", verdict: .bogus, reason: "broken trust chain"),
        Row(name: "www.expired.example.test", type: "A", verdict: .bogus, reason: "broken trust chain"),
        // An NSD serving the lab root denies a name outside the lab, signed (no longer REFUSED).
        Row(name: "www.example.org", type: "A", verdict: .secureNXDOMAIN, reason: nil),
    ] + insecureDelegations.map { Row(name: $0, type: "DS", verdict: .secureNODATA, reason: nil) }

    /// The zones other lab servers serve, which test. delegates without DS (zones/signed/test.zone).
    static let insecureDelegations = ["fault.test", "bench.test", "refresh.test", "load.test", "corp.test"]

    /// Names asked at the lab's fault server (LAB_FAULT_DNS): its modes' answers are made there, unsigned,
    /// and every other query (DS, DNSKEY included) is relayed verbatim to the trusted NSD, the DO bit and
    /// the reply's RRSIGs intact, so a validator asking only the fault server builds the chain.
    static let faultRows: [Row] = [
        Row(name: "delay-1.fault.test", type: "A", verdict: .insecure, reason: nil),
        Row(name: "truncate.fault.test", type: "A", verdict: .insecure, reason: nil),
        Row(name: "www.example.test", type: "A", verdict: .secure, reason: nil),
        Row(name: "nx.example.test", type: "A", verdict: .secureNXDOMAIN, reason: nil),
        Row(name: "modified.example.test", type: "A", verdict: .bogus, reason: "RRSIG failed to verify"),
    ]

    @Test(arguments: rows)
    func delvGivesEachLabNameItsVerdict(_ row: Row) async throws {
        let lab = try Lab.current()
        let server = try #require(lab.signedDNS, "the lab predates the signed world: scripts/lab down; scripts/lab up")
        try await Self.expectVerdict(row, asking: server, lab)
    }

    /// Both trusted NSDs the tests may ask at any time serve the signed world (the counting NSD serves the
    /// same files, but queries to it here would disturb the tests that count).
    @Test(arguments: ["LAB_TRUSTED_DNS", "LAB_TRUSTED_DNS_2"])
    func eachTrustedNSDServesTheSignedWorld(_ variable: String) async throws {
        let lab = try Lab.current()
        let server = variable == "LAB_TRUSTED_DNS" ? lab.trustedDNS : lab.trustedDNS2
        try await Self.expectVerdict(Self.rows[0], asking: server, lab)
        try await Self.expectVerdict(Row(name: "www.unsigned.example.test", type: "A", verdict: .insecure, reason: nil),
                                     asking: server, lab)
    }

    @Test(arguments: faultRows)
    func delvThroughTheFaultServerGivesItsVerdict(_ row: Row) async throws {
        let lab = try Lab.current()
        let server = try #require(lab.faultDNS, "the lab has no fault server (LAB_FAULT_DNS)")
        try await Self.expectVerdict(row, asking: server, lab)
    }

    /// Asks delv, with the lab's anchor, for `row` at `server` (every query of the chain goes there).
    static func expectVerdict(_ row: Row, asking server: Upstream, _ lab: Lab) async throws {
        let anchor = try #require(lab.trustAnchor, "the lab predates the signed world: scripts/lab down; scripts/lab up")
        let address = server.description
        let colon = try #require(address.lastIndex(of: ":"))
        let delvConf = URL(fileURLWithPath: anchor).deletingLastPathComponent().appendingPathComponent("delv.conf").path
        let result = try await ProcessRunner.run("/usr/bin/delv", [
            "@" + address[..<colon], "-p", String(address[address.index(after: colon)...]), "-a", delvConf,
            "+root=.", row.name, row.type,
        ])
        let output = result.standardOutput + result.standardError
        switch row.verdict {
        case .secure:
            #expect(output.contains("; fully validated"), "\(address): \(output)")
        case .insecure:
            #expect(output.contains("; unsigned answer"), "\(address): \(output)")
        case .secureNXDOMAIN:
            #expect(output.contains("ncache nxdomain") && output.contains("; negative response, fully validated"),
                    "\(address): \(output)")
        case .secureNODATA:
            #expect(output.contains("ncache nxrrset") && output.contains("; negative response, fully validated"),
                    "\(address): \(output)")
        case .bogus:
            #expect(output.contains("resolution failed: \(row.reason ?? "")"), "\(address): \(output)")
            #expect(!output.contains("fully validated"), "\(address): \(output)")
        }
    }

    /// The anchor file is one DS line for the root, as Debian's dns-root-data writes `root.ds`.
    @Test func trustAnchorIsOneRootDSLine() throws {
        let anchor = try #require(try Lab.current().trustAnchor)
        let lines = try String(contentsOfFile: anchor, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 1)
        let fields = lines.first?.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) ?? []
        #expect(fields.count == 7, "\(fields)")
        #expect(Array(fields.prefix(3)) == [".", "IN", "DS"])
        #expect(fields.dropFirst(4).first == "13", "algorithm ECDSAP256SHA256")
        #expect(fields.dropFirst(5).first == "2", "digest SHA-256")
    }
}
