import Foundation
import HostPinTestSupport
import Testing

/// Special-use names (RFC 6761, 6762, 6303, 7686, 8375, 9462) are answered by `hostpin serve` and `hostpin
/// lookup` themselves: dig gets the RCODE and the zone's synthetic SOA record, and the upstream (an NSD of
/// the suite's own, counted with nsd-control) gets no query. Before, each was forwarded (and, NSD refusing
/// names outside its zone, answered SERVFAIL).
@Suite(.serialized) struct ServeSpecialUseNameTests {
    /// A row of the README's table as dig sees it: the query, the RCODE, and the SOA record (owner and
    /// MNAME the zone) in the section it is expected in.
    struct Row: Sendable, CustomStringConvertible {
        let type: String
        let name: String
        let status: String
        let zone: String
        /// The SOA record answers the question itself (an SOA query at a zone's apex), rather than
        /// standing in the authority section.
        var inAnswer = false

        var description: String { "\(name) \(type)" }
    }

    static let rows: [Row] = [
        Row(type: "A", name: "x.onion", status: "NXDOMAIN", zone: "onion"),
        Row(type: "A", name: "x.invalid", status: "NXDOMAIN", zone: "invalid"),
        Row(type: "A", name: "printer.local", status: "NXDOMAIN", zone: "local"),
        Row(type: "AAAA", name: "Printer.LOCAL", status: "NXDOMAIN", zone: "local"),
        Row(type: "PTR", name: "1.1.168.192.in-addr.arpa", status: "NXDOMAIN", zone: "168.192.in-addr.arpa"),
        Row(type: "PTR", name: "1.0.0.127.in-addr.arpa", status: "NXDOMAIN", zone: "127.in-addr.arpa"),
        Row(type: "PTR", name: "1.0.0.10.in-addr.arpa", status: "NXDOMAIN", zone: "10.in-addr.arpa"),
        Row(type: "PTR", name: "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.e.f.ip6.arpa", status: "NXDOMAIN",
            zone: "8.e.f.ip6.arpa"),
        Row(type: "SOA", name: "home.arpa", status: "NOERROR", zone: "home.arpa", inAnswer: true),
        Row(type: "A", name: "nas.home.arpa", status: "NXDOMAIN", zone: "home.arpa"),
        Row(type: "TYPE64", name: "_dns.resolver.arpa", status: "NOERROR", zone: "resolver.arpa"),
        Row(type: "MX", name: "x.onion", status: "NXDOMAIN", zone: "onion"),
        Row(type: "ANY", name: "x.invalid", status: "NXDOMAIN", zone: "invalid"),
        Row(type: "MX", name: "localhost", status: "NOERROR", zone: "localhost"),
    ]

    @Test func digGetsEachRowFromTheStubAndTheUpstreamNoQuery() async throws {
        _ = try Lab.current()
        let upstream = try await AuthoritativeServer()
        let stub = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", upstream.address.description, "--dnssec", "off"])
        defer { stub.kill() }
        let address = try #require(stub.dnsAddresses.first)
        let before = try await upstream.queries()
        for row in Self.rows {
            let output = try await Self.dig(address, row.type, row.name)
            #expect(output.contains("status: \(row.status),"), "\(row): \(output)")
            // AA clear (HostPin is no zone's authority), RA set as on every answer.
            #expect(output.contains("flags: qr rd ra;"), "\(row): \(output)")
            let soa = [Self.absolute(row.zone), "60", "IN", "SOA", Self.absolute(row.zone), "nobody.invalid.", "1", "3600",
                       "1200", "604800", "10800"]
            let section = row.inAnswer ? ";; ANSWER SECTION:" : ";; AUTHORITY SECTION:"
            // Names in any case: ldns compresses the SOA's owner into the question's name (`Printer.LOCAL`).
            #expect(Self.firstRecord(after: section, in: output)?.map { $0.lowercased() } == soa.map { $0.lowercased() }, "\(row): \(output)")
            if !row.inAnswer { #expect(output.contains("ANSWER: 0,"), "\(row): \(output)") }
        }
        #expect(try await upstream.queries() == before)
        // The count works: a name outside the upstream's zone is asked (and refused: SERVFAIL).
        #expect(try await Self.dig(address, "A", "outside.example.org").contains("status: SERVFAIL"))
        #expect(try await upstream.queries() > before)
    }

    @Test func lookupAnswersSpecialUseNamesWithoutAQuery() async throws {
        _ = try Lab.current()
        let upstream = try await AuthoritativeServer()
        let before = try await upstream.queries()
        let result = try await HostPinBinary.run(["lookup", "x.onion", "printer.local", "_dns.resolver.arpa", "--json",
                                                  "--server", upstream.address.description, "--dnssec", "off"])
        #expect(result.status == 1, "\(result.standardError)")
        let objects = result.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(objects.map { $0["name"] as? String } == ["x.onion", "printer.local", "_dns.resolver.arpa"])
        #expect(objects.map { $0["code"] as? String } == ["nxdomain", "nxdomain", "nodata"])
        #expect(objects.map { $0["source"] as? String } == ["specialUse", "specialUse", "specialUse"])
        #expect(try await upstream.queries() == before)
    }

    /// dig's output for `type name` asked of `server`, one try of at most 2 s.
    static func dig(_ server: String, _ type: String, _ name: String) async throws -> String {
        let (address, port) = try #require(ServeProcess.split(server))
        return try await ProcessRunner.run("/usr/bin/dig", ["@\(address)", "-p", port, "+time=2", "+tries=1", type, name])
            .standardOutput
    }

    /// The fields of the first record after the `section` line of dig's output.
    static func firstRecord(after section: String, in output: String) -> [String]? {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        guard let index = lines.firstIndex(where: { $0 == section }), index + 1 < lines.count else { return nil }
        return lines[index + 1].split(whereSeparator: \.isWhitespace).map(String.init)
    }

    static func absolute(_ zone: String) -> String { zone + "." }
}
