import CLDNS
import Foundation
import HostPin
import HostPinTestSupport
import Testing

/// The validator fed the signed lab NSD's real answers (LAB_SIGNED_DNS), asked with DO and CD set by an
/// ldns resolver: the same verdicts as delv for every NSEC row of zones/signed/README.md, on the wire
/// NSD writes (the wildcard's synthesized owner and its proof included), and the NSEC3 rows (www.test's
/// NODATA, nx.test's NXDOMAIN with its closest-encloser proof, the NSEC3 wildcard, the unsigned children
/// under test. and in optout.test.'s opt-out span), but nx.optout.test A, child.optout.test DS and
/// x.wild.optout.test TXT: insecure as for Unbound, where delv says secure (RFC 5155 §9.2,
/// docs/ARCHITECTURE.md).
@Suite struct DNSSECLabServerTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let type: UInt16
        let verdict: String
        var testDescription: String { "\(name) \(RRset.typeName(type)) → \(verdict)" }
    }

    static let rows: [Row] = [
        Row(name: "www.example.test", type: DNSSECRecord.Kind.a, verdict: "secure"),
        Row(name: "x.wild.example.test", type: DNSSECRecord.Kind.a, verdict: "secure"),
        Row(name: "www.test", type: DNSSECRecord.Kind.a, verdict: "secure"),
        Row(name: "nx.example.test", type: DNSSECRecord.Kind.a, verdict: "secure"),
        Row(name: "www.example.test", type: DNSSECRecord.Kind.txt, verdict: "secure"),
        Row(name: "www.test", type: DNSSECRecord.Kind.txt, verdict: "secure"),
        Row(name: "nx.test", type: DNSSECRecord.Kind.a, verdict: "secure"),
        Row(name: "www.unsigned.example.test", type: DNSSECRecord.Kind.a, verdict: "insecure"),
        Row(name: "modified.example.test", type: DNSSECRecord.Kind.a, verdict: "bogus"),
        Row(name: "www.badds.example.test", type: DNSSECRecord.Kind.a, verdict: "bogus"),
        Row(name: "www.expired.example.test", type: DNSSECRecord.Kind.a, verdict: "bogus"),
        Row(name: "x.wild.example.test", type: DNSSECRecord.Kind.txt, verdict: "secure"),
        Row(name: "www.unsigned.test", type: DNSSECRecord.Kind.a, verdict: "insecure"),
        Row(name: "unsigned.test", type: DNSSECRecord.Kind.ds, verdict: "secure"),
        Row(name: "www.child.optout.test", type: DNSSECRecord.Kind.a, verdict: "insecure"),
        // delv: secure; HostPin, as Unbound: insecure (RFC 5155 §9.2).
        Row(name: "child.optout.test", type: DNSSECRecord.Kind.ds, verdict: "insecure"),
        Row(name: "www.optout.test", type: DNSSECRecord.Kind.a, verdict: "secure"),
        Row(name: "www.optout.test", type: DNSSECRecord.Kind.txt, verdict: "secure"),
        // delv: secure; HostPin, as Unbound: insecure (RFC 5155 §9.2, docs/ARCHITECTURE.md).
        Row(name: "nx.optout.test", type: DNSSECRecord.Kind.a, verdict: "insecure"),
        Row(name: "x.wild.test", type: DNSSECRecord.Kind.a, verdict: "secure"),
        Row(name: "a.b.wild.test", type: DNSSECRecord.Kind.a, verdict: "secure"),
        Row(name: "x.wild.test", type: DNSSECRecord.Kind.txt, verdict: "secure"),
        Row(name: "x.wild.optout.test", type: DNSSECRecord.Kind.a, verdict: "insecure"),
        // delv: secure; HostPin, as Unbound: insecure (RFC 5155 §9.2).
        Row(name: "x.wild.optout.test", type: DNSSECRecord.Kind.txt, verdict: "insecure"),
    ]

    /// One reply's sections and RCODE.
    struct Reply: Sendable {
        var rcode: UInt8
        var answer: [DNSSECRecord]
        var authority: [DNSSECRecord]
    }

    /// Asks `server` for `name`/`type` with DO and CD set (ldns's resolver, UDP, no recursion), on a
    /// thread of its own: ldns blocks.
    static func query(_ server: Upstream, _ name: String, _ type: UInt16) async throws -> Reply {
        let address = server.description
        let colon = try #require(address.lastIndex(of: ":"))
        let host = String(address[..<colon]), port = try #require(UInt16(address[address.index(after: colon)...]))
        let reply: Reply? = await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(returning: blockingQuery(host: host, port: port, name: name, type: type))
            }.start()
        }
        return try #require(reply, "no reply from \(address) for \(name)")
    }

    private static func blockingQuery(host: String, port: UInt16, name: String, type: UInt16) -> Reply? {
        guard let resolver = ldns_resolver_new() else { return nil }
        defer { ldns_resolver_deep_free(resolver) }
        guard let server = ldns_rdf_new_frm_str(LDNS_RDF_TYPE_A, host) else { return nil }
        defer { ldns_rdf_deep_free(server) }
        _ = ldns_resolver_push_nameserver(resolver, server)
        ldns_resolver_set_port(resolver, port)
        ldns_resolver_set_recursive(resolver, false)
        ldns_resolver_set_dnssec(resolver, true)
        ldns_resolver_set_dnssec_cd(resolver, true)
        ldns_resolver_set_retry(resolver, 2)
        ldns_resolver_set_timeout(resolver, timeval(tv_sec: 2, tv_usec: 0))
        guard let owner = ldns_dname_new_frm_str(name) else { return nil }
        defer { ldns_rdf_deep_free(owner) }
        guard let packet = ldns_resolver_query(resolver, owner, ldns_rr_type(rawValue: UInt32(type)), LDNS_RR_CLASS_IN, 0)
        else { return nil }
        defer { ldns_pkt_free(packet) }
        func records(_ list: UnsafeMutablePointer<ldns_rr_list>?) -> [DNSSECRecord] {
            (0..<(list.map { ldns_rr_list_rr_count($0) } ?? 0)).compactMap { DNSSECRecord(ldns_rr_list_rr(list, $0)) }
        }
        return Reply(rcode: UInt8(truncatingIfNeeded: ldns_pkt_get_rcode(packet).rawValue),
                     answer: records(ldns_pkt_answer(packet)), authority: records(ldns_pkt_authority(packet)))
    }

    @Test(arguments: rows)
    func verdictOnTheServersAnswersEqualsDelvs(_ row: Row) async throws {
        let verdict = try await Self.verdict(row.name, row.type)
        #expect(verdict?.kind == row.verdict, "\(String(describing: verdict))")
    }

    /// HostPin's validator on the signed lab NSD's answer to `name`/`type`, every chain query asked of
    /// that NSD; `nil` when the machine asked more than 32 times.
    static func verdict(_ name: String, _ type: UInt16) async throws -> DNSSECVerdict? {
        let lab = try Lab.current()
        let server = try #require(lab.signedDNS, "the lab predates the signed world: scripts/lab down; scripts/lab up")
        let anchors = try TrustAnchors.load(path: try #require(lab.trustAnchor))
        let reply = try await query(server, name, type)
        let owner = try #require(WireName(name))
        let claim: AnswerValidation.Claim = reply.rcode == 3 ? .nxdomain
            : reply.answer.contains { $0.type == type } ? .answer : .nodata
        var validation = AnswerValidation(name: owner, type: type, answer: reply.answer, authority: reply.authority,
                                          claim: claim, anchors: anchors, now: nowSeconds())
        var step = validation.start()
        for _ in 0..<32 {
            guard case .fetch(let request) = step else { break }
            let fetched: Reply
            switch request {
            case .dnskey(let zone): fetched = try await query(server, zone.description, DNSSECRecord.Kind.dnskey)
            case .ds(let zone): fetched = try await query(server, zone.description, DNSSECRecord.Kind.ds)
            }
            step = validation.received(request, records: fetched.answer + fetched.authority)
        }
        guard case .verdict(let verdict) = step else { return nil }
        return verdict
    }
}
