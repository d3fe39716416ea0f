import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The on-path case, end to end: inside `scripts/lab onpath` every packet to port 53 goes to the hijacker,
/// so a plain trusted upstream answers the hijacker's 127.0.0.66 (with `--dnssec off`; validating, that
/// unsigned answer is bogus and the next upstream, DoH, answers secure), while DoH and DoT to dns.example.test
/// (certificate verified against that name) answer the zone's 127.0.0.10, and `compare` calls the plain
/// answer hijacked (the box answers every name: the wildcard probe shows it); and programs that know
/// nothing of HostPin (getent, curl) reach the hijacker through the system's resolver until it names
/// `hostpin serve`. Needs root (network namespaces, nftables), as CI has. Serialized: each test starts
/// a whole lab in its namespace, and two at once on a loaded machine would run out its start timeouts.
@Suite(.serialized, .enabled(if: geteuid() == 0, "the on-path lab needs root (network namespaces, nftables)"))
struct OnPathTests {
    /// Runs inside the on-path namespace: each command's output, its exit status after `rc=`.
    static let script = """
        hostpin=$1
        tls=(--bootstrap "dns.example.test=$LAB_DNS_TLS_ADDR" --ca-file "$LAB_CA_FILE")
        run() { local name=$1; shift; echo "== $name"; "$hostpin" "$@" 2>&1; echo "rc=$?"; }
        run plain lookup www.example.test --server 127.0.0.1:53 --dnssec off
        run bogus lookup www.example.test --server 127.0.0.1:53 --trust-anchor "$LAB_TRUST_ANCHOR"
        run next lookup www.example.test --server 127.0.0.1:53 --server "$LAB_DOH_URL" "${tls[@]}" --trust-anchor "$LAB_TRUST_ANCHOR"
        run doh lookup www.example.test --server "$LAB_DOH_URL" "${tls[@]}"
        run dot lookup www.example.test --server "$LAB_DOT_SERVER" "${tls[@]}"
        run compare compare www.example.test --server "$LAB_DOH_URL" "${tls[@]}" --local 127.0.0.1:53
        run fetch fetch "http://www.example.test/whoami" --server "$LAB_DOT_SERVER" "${tls[@]}"
        """

    /// Runs inside the on-path namespace: getent and curl, each time in a private mount namespace whose
    /// /etc/resolv.conf is a temporary file (the host's is never touched) naming 127.0.0.1 (a plain
    /// resolver: the box on the path answers) and then the stub, `hostpin serve` on LAB_ONPATH_STUB:53
    /// asking the trusted resolver over DoH; then the stub's exit status at SIGTERM and its stderr.
    static let realClientScript = """
        hostpin=$1
        dir=$(mktemp -d)
        trap 'kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
        printf 'nameserver 127.0.0.1\noptions timeout:2 attempts:1\n' >"$dir/plain.conf"
        printf 'nameserver %s\noptions timeout:2 attempts:1\n' "$LAB_ONPATH_STUB" >"$dir/stub.conf"
        clients() {
            unshare --mount sh -c 'mount --bind "$0" /etc/resolv.conf || exit
                echo "getent: $(getent hosts www.example.test)"
                echo "curl: $(curl -sS --noproxy "*" --max-time 20 "http://www.example.test:$1/whoami")"' "$1" "$LAB_HTTP_PORT" 2>&1
        }
        echo "== without the stub"; clients "$dir/plain.conf"
        "$hostpin" serve --dns-listen "$LAB_ONPATH_STUB:53" --server "$LAB_DOH_URL" \
            --bootstrap "dns.example.test=$LAB_DNS_TLS_ADDR" --ca-file "$LAB_CA_FILE" 2>"$dir/serve.log" &
        pid=$!
        for _ in $(seq 300); do grep -q 'listening on' "$dir/serve.log" && break; sleep 0.1; done
        echo "== with the stub"; clients "$dir/stub.conf"
        kill -TERM "$pid"; wait "$pid"; echo "rc=$?"
        echo "== serve"; cat "$dir/serve.log"
        """

    /// `script` run by `scripts/lab onpath` with the built `hostpin`: its output's lines by `== NAME` section.
    private static func onPath(_ script: String) async throws -> [String: [String]] {
        let result = try await ProcessRunner.run(Lab.repositoryRoot.appendingPathComponent("scripts/lab").path,
                                                 ["onpath", "/bin/bash", "-c", script, "onpath", try HostPinBinary.path()],
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
        return sections
    }

    @Test func plainUpstreamIsHijackedOnThePathWhileDoHAndDoTAnswerTheTruth() async throws {
        let sections = try await Self.onPath(Self.script)
        let plain = try #require(sections["plain"])
        #expect(plain.count == 2 && plain[0].hasPrefix("www.example.test. ") && plain[0].hasSuffix(" IN A 127.0.0.66"),
                "\(plain)")
        #expect(plain.last == "rc=0")
        // Validating (HostPin's default) from the lab root: the box cannot sign, so its answer is bogus...
        let bogus = try #require(sections["bogus"])
        #expect(bogus.count == 2 && bogus[0].hasPrefix("hostpin: www.example.test: DNSSEC validation failed (bogus): ")
                    && !bogus[0].contains("127.0.0.66"), "\(bogus)")
        #expect(bogus.last == "rc=3")
        // ...and with DoH after it in the list, the next upstream's answer is the truth, secure.
        let next = try #require(sections["next"])
        #expect(next.count == 3 && next[0].hasPrefix("www.example.test. ") && next[0].hasSuffix(" IN A 127.0.0.10"), "\(next)")
        #expect(next.dropFirst().elementsEqual(["; secure", "rc=0"]), "\(next)")
        for transport in ["doh", "dot"] {
            let lines = try #require(sections[transport])
            #expect(lines.count == 3 && lines[0].hasPrefix("www.example.test. ") && lines[0].hasSuffix(" IN A 127.0.0.10"),
                    "\(transport): \(lines)")
            #expect(lines.dropFirst().elementsEqual(["; secure", "rc=0"]), "\(transport): \(lines)")
        }
        #expect(sections["compare"]?.map(CompareOutput.normalised) == [
            "name: www.example.test",
            "trusted (https://dns.example.test/dns-query): 127.0.0.10 ; secure",
            "local (127.0.0.1:53): 127.0.0.66",
            "reason: wildcard: the local resolver answers hostpin-RANDOM.example.test, a random name that does not "
                + "exist (trusted side: NXDOMAIN), with 127.0.0.66 too: it answers names that do not exist",
            "verdict: hijacked",
            "rc=4",
        ])
        #expect(sections["fetch"] == ["origin=www host=www.example.test", "rc=0"])
    }

    @Test func getentAndCurlReachTheHijackerThroughTheSystemResolverAndTheTruthThroughTheStub() async throws {
        let sections = try await Self.onPath(Self.realClientScript)
        // getent prints the address and the name apart by a run of spaces.
        let normalised = { (lines: [String]?) in lines?.map { $0.split(whereSeparator: \.isWhitespace).joined(separator: " ") } }
        #expect(normalised(sections["without the stub"]) == [
            "getent: 127.0.0.66 www.example.test",
            "curl: origin=hijacker host=www.example.test",
        ])
        #expect(normalised(sections["with the stub"]) == [
            "getent: 127.0.0.10 www.example.test",
            "curl: origin=www host=www.example.test",
            "rc=0",
        ])
        #expect(sections["serve"] == ["listening on 127.0.0.53:53 (DNS over UDP and TCP)"])
    }
}
