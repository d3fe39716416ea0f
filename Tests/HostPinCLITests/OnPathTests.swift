import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The on-path case, end to end: inside `scripts/lab onpath` every packet to port 53 goes to the hijacker,
/// so a plain trusted upstream answers the hijacker's 127.0.0.66, while DoH and DoT to dns.example.test
/// (certificate verified against that name) answer the zone's 127.0.0.10, and `compare` calls the plain
/// answer hijacked (the box answers every name: the wildcard probe shows it). Needs root (network namespaces, nftables), as CI has.
@Suite(.enabled(if: geteuid() == 0, "the on-path lab needs root (network namespaces, nftables)"))
struct OnPathTests {
    /// Runs inside the on-path namespace: each command's output, its exit status after `rc=`.
    static let script = """
        hostpin=$1
        tls=(--bootstrap "dns.example.test=$LAB_DNS_TLS_ADDR" --ca-file "$LAB_CA_FILE")
        run() { local name=$1; shift; echo "== $name"; "$hostpin" "$@" 2>&1; echo "rc=$?"; }
        run plain lookup www.example.test --server 127.0.0.1:53
        run doh lookup www.example.test --server "$LAB_DOH_URL" "${tls[@]}"
        run dot lookup www.example.test --server "$LAB_DOT_SERVER" "${tls[@]}"
        run compare compare www.example.test --server "$LAB_DOH_URL" "${tls[@]}" --local 127.0.0.1:53
        run fetch fetch "http://www.example.test/whoami" --server "$LAB_DOT_SERVER" "${tls[@]}"
        """

    @Test func plainUpstreamIsHijackedOnThePathWhileDoHAndDoTAnswerTheTruth() async throws {
        let result = try await ProcessRunner.run(Lab.repositoryRoot.appendingPathComponent("scripts/lab").path,
                                                 ["onpath", "/bin/bash", "-c", Self.script, "onpath", try HostPinBinary.path()],
                                                 environment: ["HOSTPIN_UPSTREAMS": ""])
        try #require(result.status == 0, "scripts/lab onpath failed: \(result.standardError)")
        var sections: [String: [String]] = [:]
        var current = ""
        for line in result.standardOutput.split(separator: "\n").map(String.init) {
            if line.hasPrefix("== ") {
                current = String(line.dropFirst(3))
            } else {
                sections[current, default: []].append(line)
            }
        }
        let plain = try #require(sections["plain"])
        #expect(plain.count == 2 && plain[0].hasPrefix("www.example.test. ") && plain[0].hasSuffix(" IN A 127.0.0.66"),
                "\(plain)")
        #expect(plain.last == "rc=0")
        for transport in ["doh", "dot"] {
            let lines = try #require(sections[transport])
            #expect(lines.count == 2 && lines[0].hasPrefix("www.example.test. ") && lines[0].hasSuffix(" IN A 127.0.0.10"),
                    "\(transport): \(lines)")
            #expect(lines.last == "rc=0")
        }
        #expect(sections["compare"]?.map(CompareOutput.normalised) == [
            "name: www.example.test",
            "trusted (https://dns.example.test/dns-query): 127.0.0.10",
            "local (127.0.0.1:53): 127.0.0.66",
            "reason: wildcard: the local resolver answers hostpin-RANDOM.example.test, a random name that does not "
                + "exist (trusted side: NXDOMAIN), with 127.0.0.66 too: it answers names that do not exist",
            "verdict: hijacked",
            "rc=4",
        ])
        #expect(sections["fetch"] == ["origin=www host=www.example.test", "rc=0"])
    }
}
