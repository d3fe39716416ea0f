import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Happy Eyeballs (RFC 8305) against a real black hole: in a network namespace of the test's own (the
/// on-path lab of `scripts/lab onpath`; its DNS box leaves the second trusted NSD's port alone), an
/// nftables rule drops every packet to one of `dual.example.test`'s origins, so connecting there hangs
/// as it does behind a broken IPv6 route (a closed port would refuse at once and prove nothing: the
/// script checks that curl's connect times out). `hostpin fetch -v` (libcurl's race) and `hostpin proxy`
/// (HostPin's own, ``ConnectionRace``) must connect to the other family: with the AAAA origin
/// black-holed, IPv4 after the 250 ms attempt delay, well within 1 s; with the A origin black-holed,
/// IPv6 at once. Needs root (network namespaces, nftables), as CI has.
@Suite(.enabled(if: geteuid() == 0, "the black hole needs root (network namespaces, nftables)"))
struct HappyEyeballsBlackHoleTests {
    /// Runs inside the namespace. Each section: `== NAME`, the output (standard error too), then `rc=STATUS`.
    static let script = """
        hostpin=$1
        dns=$LAB_TRUSTED_DNS_2
        port=$LAB_HTTP_PORT
        section() {
            local name=$1; shift
            echo "== $name"
            "$@" 2>&1
            echo "rc=$?"
        }
        fetch() { "$hostpin" fetch -v "$@" --server "$dns" --max-time 20; }
        via_proxy() { curl -sS --max-time 20 -x http://127.0.0.1:8118 "$@"; }
        blackhole() {
            nft flush chain inet hostpin_blackhole output
            nft add rule inet hostpin_blackhole output "$1" daddr "$2" tcp dport "$port" drop
        }
        logs=$(mktemp -d)
        trap 'rm -rf "$logs"' EXIT
        "$hostpin" proxy --listen 127.0.0.1:8118 --server "$dns" --allow-private >"$logs/access.log" 2>"$logs/stderr" &
        proxy=$!
        for _ in $(seq 200); do
            curl -s -o /dev/null -x http://127.0.0.1:8118 "http://www.example.test:$port/whoami" && break
            sleep 0.1
        done
        nft add table inet hostpin_blackhole
        nft add chain inet hostpin_blackhole output '{ type filter hook output priority 0; policy accept; }'
        blackhole ip6 ::1
        section probe-v6 curl -sS -o /dev/null --connect-timeout 1 "http://[::1]:$port/whoami"
        section fetch-aaaa-blackholed fetch "http://dual.example.test:$port/whoami"
        section proxy-aaaa-blackholed via_proxy "http://dual.example.test:$port/whoami"
        blackhole ip 127.0.0.10
        section probe-v4 curl -sS -o /dev/null --connect-timeout 1 "http://127.0.0.10:$port/whoami"
        section fetch-a-blackholed fetch "http://dual.example.test:$port/whoami"
        section proxy-a-blackholed via_proxy "http://dual.example.test:$port/whoami"
        kill "$proxy"
        wait "$proxy"
        echo "== access-log"
        cat "$logs/access.log"
        """

    struct Section {
        var lines: [String] = []
        var status: Int32?
    }

    static func sections(of output: String) -> [String: Section] {
        var sections: [String: Section] = [:]
        var current = ""
        for line in output.split(separator: "\n").map(String.init) {
            if line.hasPrefix("== ") {
                current = String(line.dropFirst(3))
                sections[current] = Section()
            } else if line.hasPrefix("rc="), current != "access-log" {
                sections[current]?.status = Int32(line.dropFirst(3))
            } else {
                sections[current]?.lines.append(line)
            }
        }
        return sections
    }

    /// The addresses of `fetch -v`'s `*   Trying ADDRESS:PORT... (at N ms)` lines, in order.
    static func attempts(in lines: [String]) -> [String] {
        lines.compactMap { line in
            guard line.hasPrefix("*   Trying ") else { return nil }
            return line.dropFirst("*   Trying ".count).components(separatedBy: "...").first
        }
    }

    /// The duration of `fetch -v`'s `* Done: STATUS, N bytes in D ms` line.
    static func doneMilliseconds(in lines: [String]) -> Int? {
        guard let done = lines.first(where: { $0.hasPrefix("* Done: ") }), let tail = done.components(separatedBy: " in ").last
        else { return nil }
        return Int(tail.dropLast(3))
    }

    /// The access log's pinned address and duration in milliseconds for the request to `dual`, in order.
    static func dualRequests(in log: [String]) -> [(pinned: String, milliseconds: Double)] {
        log.compactMap { line in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count >= 8, fields[3].contains("dual.example.test"), fields[7].hasSuffix("ms"),
                  let duration = Double(fields[7].dropLast(2)) else { return nil }
            return (fields[4], duration)
        }
    }

    @Test func otherFamilyWinsWhenOneOriginIsBlackHoled() async throws {
        let result = try await ProcessRunner.run(Lab.repositoryRoot.appendingPathComponent("scripts/lab").path,
                                                 ["onpath", "/bin/bash", "-c", Self.script, "blackhole", try HostPinBinary.path()],
                                                 environment: ["HOSTPIN_UPSTREAMS": ""])
        try #require(result.status == 0, "scripts/lab onpath failed: \(result.standardError)")
        let sections = Self.sections(of: result.standardOutput)
        // The black holes are real: curl's connect times out (28) instead of being refused (7).
        #expect(sections["probe-v6"]?.status == 28, "\(result.standardOutput)")
        #expect(sections["probe-v4"]?.status == 28, "\(result.standardOutput)")

        // fetch -v: IPv6 attempted first, then IPv4 (after the attempt delay, while IPv6 hangs), which
        // answers; the request (resolution included) was done well within 1 s, not after a connect timeout.
        let overIPv4 = try #require(sections["fetch-aaaa-blackholed"])
        #expect(overIPv4.status == 0 && overIPv4.lines.contains("origin=www host=dual.example.test"), "\(overIPv4)")
        #expect(Self.attempts(in: overIPv4.lines) == ["[::1]:80", "127.0.0.10:80"], "\(overIPv4)")
        #expect(overIPv4.lines.contains("* Connected to dual.example.test (127.0.0.10) port 80 via libcurl"), "\(overIPv4)")
        #expect(try #require(Self.doneMilliseconds(in: overIPv4.lines)) < 1000, "\(overIPv4)")
        let overIPv6 = try #require(sections["fetch-a-blackholed"])
        #expect(overIPv6.status == 0 && overIPv6.lines.contains("origin=v6 host=dual.example.test"), "\(overIPv6)")
        #expect(Self.attempts(in: overIPv6.lines) == ["[::1]:80"], "\(overIPv6)")
        #expect(try #require(Self.doneMilliseconds(in: overIPv6.lines)) < 1000, "\(overIPv6)")

        #expect(sections["proxy-aaaa-blackholed"]?.lines == ["origin=www host=dual.example.test"])
        #expect(sections["proxy-a-blackholed"]?.lines == ["origin=v6 host=dual.example.test"])
        let logged = Self.dualRequests(in: try #require(sections["access-log"]).lines)
        try #require(logged.count == 2, "\(sections["access-log"]?.lines ?? [])")
        #expect(logged[0].pinned == "127.0.0.10:80" && logged[0].milliseconds < 1000, "\(logged[0])")
        #expect(logged[1].pinned == "[::1]:80" && logged[1].milliseconds < 1000, "\(logged[1])")
    }
}
