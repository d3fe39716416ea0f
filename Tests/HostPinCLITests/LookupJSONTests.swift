import Foundation
import HostPinTestSupport
import Testing

/// `hostpin lookup --json`: one JSON object per name per line, parsed back with JSONSerialization.
@Suite struct LookupJSONTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// Each stdout line parsed as a JSON object.
    private func objects(_ result: ProcessRunner.Result) throws -> [[String: Any]] {
        try result.standardOutput.split(separator: "\n").map { line in
            let parsed = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(parsed as? [String: Any])
        }
    }

    @Test func resolutionHasEveryFieldWithItsValue() async throws {
        let before = Date()
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--json", "--server", "\(lab.trustedDNS)"])
        #expect(result.status == 0)
        let object = try #require(try objects(result).first)
        #expect(Set(object.keys) == ["name", "addresses", "cnames", "dnssec", "ttl", "upstream", "source", "receivedAt"])
        // Not validated (the default mode, off): the key is there, null.
        #expect(object["dnssec"] is NSNull)
        #expect(object["name"] as? String == "www.example.test")
        let addresses = try #require(object["addresses"] as? [[String: Any]])
        #expect(addresses.count == 1)
        #expect(addresses.first?["address"] as? String == "127.0.0.10")
        #expect(addresses.first?["family"] as? Int == 4)
        #expect(addresses.first?["ttl"] as? Int == 3600)
        #expect((object["cnames"] as? [Any])?.isEmpty == true)
        #expect(object["ttl"] as? Int == 3600)
        #expect(object["upstream"] as? String == "\(lab.trustedDNS)")
        #expect(object["source"] as? String == "upstream")
        let text = try #require(object["receivedAt"] as? String)
        #expect(text.hasSuffix("Z"))
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let received = try #require(formatter.date(from: text))
        #expect(received.timeIntervalSince(before) > -1)
        #expect(received.timeIntervalSinceNow < 1)
    }

    @Test func cnameChainAndMinimumTTLAreReported() async throws {
        let result = try await HostPinBinary.run(["lookup", "alias.example.test", "--json", "--server", "\(lab.trustedDNS)"])
        #expect(result.status == 0)
        let object = try #require(try objects(result).first)
        let cnames = try #require(object["cnames"] as? [[String: Any]])
        #expect(cnames.count == 1)
        #expect(cnames.first?["alias"] as? String == "alias.example.test")
        #expect(cnames.first?["target"] as? String == "www.example.test")
        #expect(cnames.first?["ttl"] as? Int == 5)
        #expect(object["ttl"] as? Int == 5)
    }

    @Test func ipv6AddressHasFamilySix() async throws {
        let result = try await HostPinBinary.run(["lookup", "v6only.example.test", "--json", "--server", "\(lab.trustedDNS)"])
        let address = try #require((try objects(result).first?["addresses"] as? [[String: Any]])?.first)
        #expect(address["address"] as? String == "::1")
        #expect(address["family"] as? Int == 6)
    }

    @Test func failedNamesGiveErrorObjectsInArgumentOrder() async throws {
        // The lab's fault server refuses refused.fault.test and relays the other names to the trusted NSD.
        let fault = try #require(lab.faultDNS, "the lab has no fault server (LAB_FAULT_DNS)")
        let result = try await HostPinBinary.run(["lookup", "nx.example.test", "www.example.test", "refused.fault.test",
                                            "--json", "--server", "\(fault)"])
        #expect(result.status == 3)
        let objects = try objects(result)
        #expect(objects.count == 3)
        #expect(objects.map { $0["name"] as? String } == ["nx.example.test", "www.example.test", "refused.fault.test"])
        #expect(Set(objects[0].keys) == ["name", "error", "code", "source"])
        #expect(objects[0]["code"] as? String == "nxdomain")
        #expect(objects[0]["error"] as? String == "nx.example.test: NXDOMAIN (the name does not exist)")
        #expect(objects[0]["source"] as? String == "upstream")
        #expect(objects[1]["source"] as? String == "upstream")
        #expect(objects[2]["code"] as? String == "upstreams_failed")
        #expect(objects[2]["source"] as? String == "upstream")  // the fault server refused it
    }

    @Test func failureSourceSaysWhetherTheNegativeAnswerCameFromTheUpstreamOrTheNegativeCache() async throws {
        // One name at a time: the second of each pair finds the first's answer in the cache.
        let result = try await HostPinBinary.run(["lookup", "nx.example.test", "nx.example.test", "v6only.example.test",
                                                  "v6only.example.test", "--family", "4", "--concurrency", "1", "--json",
                                                  "--server", "\(lab.trustedDNS)"])
        #expect(result.status == 1)
        let objects = try objects(result)
        #expect(objects.map { $0["code"] as? String } == ["nxdomain", "nxdomain", "nodata", "nodata"])
        #expect(objects.map { $0["source"] as? String } == ["upstream", "negativeCache", "upstream", "negativeCache"])
        #expect(objects.allSatisfy { Set($0.keys) == ["name", "error", "code", "source"] })
    }

    @Test func literalWithoutAnAddressOfTheFamilyIsNodataFromTheLiteral() async throws {
        let result = try await HostPinBinary.run(["lookup", "127.0.0.1", "--family", "6", "--json",
                                                  "--server", "\(lab.trustedDNS)"])
        #expect(result.status == 1)
        let object = try #require(try objects(result).first)
        #expect(object["code"] as? String == "nodata")
        #expect(object["source"] as? String == "literal")
    }

    @Test func nodataHasItsCode() async throws {
        let result = try await HostPinBinary.run(["lookup", "v6only.example.test", "--family", "4", "--json",
                                            "--server", "\(lab.trustedDNS)"])
        #expect(result.status == 1)
        #expect(try objects(result).first?["code"] as? String == "nodata")
    }
}

extension LookupJSONTests {
    @Test func exhaustedBudgetHasTheTimeoutCode() async throws {
        // Two silent upstreams need 2 × (50 ms + 100 ms) of c-ares tries, far beyond a 0.1 s budget.
        try await SilentUpstream.with { first in
            try await SilentUpstream.with { second in
                let result = try await HostPinBinary.run(["lookup", "www.example.test", "--json", "--timeout", "0.1",
                                                    "--server", first, "--server", second])
                #expect(result.status == 3)
                let object = try #require(try objects(result).first)
                #expect(object["code"] as? String == "timeout")
                #expect(object["source"] as? String == "upstream")
                // The library may append the failures it saw before the budget ran out: "(ip:port: timeout)".
                let error = try #require(object["error"] as? String)
                #expect(error.hasPrefix("no trusted upstream answered within 100 ms"))
                #expect(result.standardError == "hostpin: www.example.test: \(error)\n")
            }
        }
    }
}
