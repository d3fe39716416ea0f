import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `pass` against `pin` and no rule, for `hostpin fetch`: a passed host is resolved by the system's
/// resolver, never by the trusted upstream. The "system resolver" is the lab's hijacker: in the on-path
/// lab's namespace (`scripts/lab onpath`, where every packet to port 53 reaches the hijacker), each
/// fetch runs in a private mount namespace of its own (`unshare --mount`) with a temporary resolv.conf
/// (`nameserver 127.0.0.1`) bind-mounted over `/etc/resolv.conf` — the host's file is never touched and
/// nothing leaves the namespace. The trusted upstream is the lab's counting NSD: its query count must not
/// move for `pass` (nor `pin`), and must for no rule. It asks the hijacker on purpose, hence the name
/// (`scripts/test` runs it apart). Needs root (namespaces, nftables), as CI has.
@Suite(.enabled(if: geteuid() == 0, "the on-path lab needs root (network namespaces, nftables)"))
struct PassRuleHijackerOptInTests {
    /// Runs inside the on-path namespace. Each section: `== NAME`, fetch -v's output (standard error
    /// too), then `rc=STATUS trusted=QUERIES hijacker=QUERIES` (queries the counting NSD and the
    /// hijacker received meanwhile).
    static let script = """
        hostpin=$1
        work=$(mktemp -d)
        trap 'rm -rf "$work"' EXIT
        printf 'nameserver 127.0.0.1\\n' >"$work/resolv.conf"
        printf '{"rules": [{"action": "pass", "host": "www.example.test"}]}' >"$work/pass.json"
        printf '{"rules": [{"action": "pin", "host": "www.example.test", "addresses": ["127.0.0.10"]}]}' >"$work/pin.json"
        trusted() { nsd-control -c "$LAB_COUNT_NSD_CONF" stats_noreset | sed -n 's/^num.queries=//p'; }
        hijacker() { grep -c 'query\\[.*www\\.example\\.test' "$LAB_HIJACK_LOG"; }
        run() {
            local name=$1; shift
            local queries hijacks
            queries=$(trusted)
            hijacks=$(hijacker)
            echo "== $name"
            unshare --mount sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' "$work/resolv.conf" \\
                "$hostpin" fetch -v "$@" --server "$LAB_COUNT_DNS" 2>&1
            echo "rc=$? trusted=$(( $(trusted) - queries )) hijacker=$(( $(hijacker) - hijacks ))"
        }
        run pass --rules "$work/pass.json" "http://www.example.test/whoami"
        run pin --rules "$work/pin.json" "http://www.example.test/whoami"
        run none "http://www.example.test/whoami"
        """

    struct Section {
        var lines: [String] = []
        var status = ""
    }

    @Test func passAsksTheSystemResolverAndNeverTheTrustedUpstream() async throws {
        let result = try await ProcessRunner.run(Lab.repositoryRoot.appendingPathComponent("scripts/lab").path,
                                                 ["onpath", "/bin/bash", "-c", Self.script, "pass", try HostPinBinary.path()],
                                                 environment: ["HOSTPIN_UPSTREAMS": ""])
        try #require(result.status == 0, "scripts/lab onpath failed: \(result.standardError)")
        var sections: [String: Section] = [:]
        var current = ""
        for line in result.standardOutput.split(separator: "\n").map(String.init) {
            if line.hasPrefix("== ") {
                current = String(line.dropFirst(3))
                sections[current] = Section()
            } else if line.hasPrefix("rc=") {
                sections[current]?.status = line
            } else {
                sections[current]?.lines.append(line)
            }
        }
        // pass: the system's resolver (the hijacker) answered, the trusted upstream heard nothing, and
        // -v says the request was passed.
        let pass = try #require(sections["pass"])
        #expect(pass.lines.contains("origin=hijacker host=www.example.test"), "\(pass)")
        #expect(pass.lines.contains("* Rules: rules[0] (pass host www.example.test)"), "\(pass)")
        #expect(pass.lines.contains { $0.hasPrefix("* www.example.test: not pinned, resolved by the system (pass)") }, "\(pass)")
        #expect(pass.status.hasPrefix("rc=0 trusted=0 hijacker="), "\(pass)")
        #expect(pass.status != "rc=0 trusted=0 hijacker=0", "the system resolver was not asked: \(pass)")
        // pin: no query anywhere, the rule's address.
        let pin = try #require(sections["pin"])
        #expect(pin.lines.contains("origin=www host=www.example.test"), "\(pin)")
        #expect(pin.lines.contains("* www.example.test: 127.0.0.10 (pinned)"), "\(pin)")
        #expect(pin.status == "rc=0 trusted=0 hijacker=0", "\(pin)")
        // No rule: the trusted upstream is asked (A and AAAA, and validating from the lab root the chain's five
        // DNSKEY and DS queries), the system's resolver is not.
        let none = try #require(sections["none"])
        #expect(none.lines.contains("origin=www host=www.example.test"), "\(none)")
        #expect(none.lines.contains("* www.example.test: 127.0.0.10 (upstream)"), "\(none)")
        #expect(none.status == "rc=0 trusted=7 hijacker=0", "\(none)")
    }
}
