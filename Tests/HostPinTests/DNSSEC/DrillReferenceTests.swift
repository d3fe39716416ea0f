import Foundation
import HostPin
import HostPinTestSupport
import Testing

/// drill (ldns's `drill -S`, "chase" the signatures to a trusted key), the second reference beside delv
/// (`SignedLabTests`), against the signed lab NSD with the lab's anchor (`-k LAB_TRUST_ANCHOR`): for
/// every lab name, what drill says beside delv's verdict and HostPin's (`DNSSECLabServerTests.verdict`,
/// asserted here too) — the table of zones/signed/README.md.
///
/// drill is weaker than delv and HostPin, and the rows show where (HostPin does not follow it):
/// - it never proves a zone unsigned: chasing an unsigned answer (www.unsigned.test, the opt-out child)
///   finds no signature and fails "No DNSSEC public key(s)", the same words as for a DS that matches no
///   key (www.badds.example.test): insecure and bogus look alike;
/// - it checks a denial's proof only under NSEC ("Existence denied or verifiably insecure"); under NSEC3
///   it prints the signed NSEC3 records and succeeds without that line — it verified their signatures,
///   not that they deny the name;
/// - a wildcard expansion is accepted on its signature alone: x.wild.optout.test, which an opt-out span
///   makes insecure for delv and HostPin, "succeeds".
@Suite struct DrillReferenceTests {
    /// What `drill -S` says of one query.
    enum Drill: String, Sendable, CustomStringConvertible {
        /// "Chase successful": every signature up to the anchor verified.
        case chased = "chase successful"
        /// "Chase successful" after "Existence denied or verifiably insecure": an NSEC denial it checked.
        case deniedNSEC = "denial checked (NSEC), chase successful"
        /// "Chase successful" with NSEC3 records under "Existence is denied by:" and no check line.
        case signedNSEC3 = "NSEC3 signatures only, chase successful"
        /// "Chase failed", "No DNSSEC public key(s)": no signature to follow (unsigned) or no key for it.
        case noKeys = "chase failed: no DNSSEC public key(s)"
        /// "Chase failed", "Bogus DNSSEC signature".
        case bogusSignature = "chase failed: bogus DNSSEC signature"
        /// "Chase failed", "DNSSEC signature has expired".
        case expired = "chase failed: DNSSEC signature has expired"

        var description: String { rawValue }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let type: String
        /// delv's verdict (asserted by `SignedLabTests`).
        let delv: String
        let drill: Drill
        /// HostPin's: secure, insecure or bogus.
        let hostPin: String

        var testDescription: String { "\(name) \(type): drill \(drill), delv \(delv), HostPin \(hostPin)" }
    }

    static let rows: [Row] = [
        Row(name: "www.example.test", type: "A", delv: "secure", drill: .chased, hostPin: "secure"),
        Row(name: "x.wild.example.test", type: "A", delv: "secure", drill: .chased, hostPin: "secure"),
        Row(name: "www.test", type: "A", delv: "secure", drill: .chased, hostPin: "secure"),
        Row(name: "nx.example.test", type: "A", delv: "NXDOMAIN, secure", drill: .deniedNSEC, hostPin: "secure"),
        Row(name: "nx.test", type: "A", delv: "NXDOMAIN, secure", drill: .signedNSEC3, hostPin: "secure"),
        Row(name: "www.example.test", type: "TXT", delv: "NODATA, secure", drill: .deniedNSEC, hostPin: "secure"),
        Row(name: "www.test", type: "TXT", delv: "NODATA, secure", drill: .signedNSEC3, hostPin: "secure"),
        Row(name: "x.wild.example.test", type: "TXT", delv: "NODATA, secure", drill: .deniedNSEC, hostPin: "secure"),
        Row(name: "x.wild.test", type: "A", delv: "secure", drill: .chased, hostPin: "secure"),
        Row(name: "a.b.wild.test", type: "A", delv: "secure", drill: .chased, hostPin: "secure"),
        Row(name: "x.wild.test", type: "TXT", delv: "NODATA, secure", drill: .signedNSEC3, hostPin: "secure"),
        Row(name: "www.optout.test", type: "A", delv: "secure", drill: .chased, hostPin: "secure"),
        Row(name: "www.optout.test", type: "TXT", delv: "NODATA, secure", drill: .signedNSEC3, hostPin: "secure"),
        Row(name: "unsigned.test", type: "DS", delv: "NODATA, secure", drill: .signedNSEC3, hostPin: "secure"),
        Row(name: "child.optout.test", type: "DS", delv: "NODATA, secure", drill: .signedNSEC3, hostPin: "insecure"),
        Row(name: "nx.optout.test", type: "A", delv: "NXDOMAIN, secure", drill: .signedNSEC3, hostPin: "insecure"),
        Row(name: "x.wild.optout.test", type: "A", delv: "insecure", drill: .chased, hostPin: "insecure"),
        Row(name: "x.wild.optout.test", type: "TXT", delv: "NODATA, secure", drill: .signedNSEC3, hostPin: "insecure"),
        Row(name: "www.unsigned.example.test", type: "A", delv: "insecure", drill: .noKeys, hostPin: "insecure"),
        Row(name: "www.unsigned.test", type: "A", delv: "insecure", drill: .noKeys, hostPin: "insecure"),
        Row(name: "www.child.optout.test", type: "A", delv: "insecure", drill: .noKeys, hostPin: "insecure"),
        Row(name: "modified.example.test", type: "A", delv: "bogus", drill: .bogusSignature, hostPin: "bogus"),
        Row(name: "www.badds.example.test", type: "A", delv: "bogus", drill: .noKeys, hostPin: "bogus"),
        Row(name: "www.expired.example.test", type: "A", delv: "bogus", drill: .expired, hostPin: "bogus"),
        Row(name: "www.example.org", type: "A", delv: "NXDOMAIN, secure", drill: .deniedNSEC, hostPin: "secure"),
        Row(name: "fault.test", type: "DS", delv: "NODATA, secure", drill: .signedNSEC3, hostPin: "secure"),
    ]

    @Test(arguments: rows)
    func drillsVerdictBesideDelvsAndHostPins(_ row: Row) async throws {
        let lab = try Lab.current()
        let server = try #require(lab.signedDNS, "the lab predates the signed world: scripts/lab down; scripts/lab up")
        let anchor = try #require(lab.trustAnchor)
        let address = server.description
        let colon = try #require(address.lastIndex(of: ":"))
        let result = try await ProcessRunner.run("/usr/bin/drill", [
            "-S", "-k", anchor, "-p", String(address[address.index(after: colon)...]), "@" + address[..<colon],
            row.name, row.type,
        ])
        let output = result.standardOutput + result.standardError
        #expect(Self.drill(output) == row.drill, "\(output)")
        let type = try #require(["A": DNSSECRecord.Kind.a, "TXT": DNSSECRecord.Kind.txt, "DS": DNSSECRecord.Kind.ds][row.type])
        let verdict = try await DNSSECLabServerTests.verdict(row.name, type)
        #expect(verdict?.kind == row.hostPin, "\(String(describing: verdict))")
    }

    /// drill's verdict read from its output; `nil` for anything else.
    static func drill(_ output: String) -> Drill? {
        if output.contains(";; Chase successful") {
            if output.contains("Existence denied or verifiably insecure") { return .deniedNSEC }
            return output.contains("Existence is denied by:") ? .signedNSEC3 : .chased
        }
        guard output.contains(";; Chase failed") else { return nil }
        if output.contains("Bogus DNSSEC signature") { return .bogusSignature }
        if output.contains("DNSSEC signature has expired") { return .expired }
        if output.contains("No DNSSEC public key(s)") { return .noKeys }
        return nil
    }
}
