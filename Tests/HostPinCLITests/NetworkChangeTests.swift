import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Network changes (issue 30), end to end in a network namespace of `scripts/lab onpath` (its box on the
/// path removed: a plain namespace with the lab inside) with a veth pair as the new link: `hostpin serve`
/// on the counting NSD (plain, first) and DoH. The plain upstream is cut off with nftables until a lookup
/// holds it down and DoH answers (a kept TLS connection); then it is reachable again, an address is added
/// and the default route replaced: within 2 s the log says so once, the DoH connection the client had is
/// gone (its local port no longer established, `ss`), the held-down upstream is asked again and the
/// pre-resolved names are refreshed (counted at the NSD, `nsd-control`), and the hijacker (dnsmasq, the
/// "new network's resolver") receives nothing. Then an address removed, a flood of 2 000 addresses (one
/// change), a lifetime-only update of an IPv6 address (none), and `--no-network-watch` (none).
/// Needs root, as the on-path lab does; serialized with nothing else (its own namespace and lab).
@Suite(.serialized, .enabled(if: geteuid() == 0, "network namespaces and nftables need root"))
struct NetworkChangeTests {
    static let script = #"""
hostpin=$1
set -u
# A plain namespace: the lab without the box on the path (every port-53 packet would go to the hijacker).
nft delete table inet hostpin_onpath
dir=$(mktemp -d)
pid=
trap '[[ -n $pid ]] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
now() { date +%s%3N; }
count_port=${LAB_COUNT_DNS##*:}
doh_port=${LAB_DOH_URL#https://*:}; doh_port=${doh_port%%/*}
queries() { nsd-control -c "$LAB_COUNT_NSD_CONF" stats_noreset | sed -n 's/^num.queries=//p'; }
doh_connections() { ss -Htnp state established "( dport = :$doh_port )" | grep -c '"hostpin"'; }
doh_ports() { ss -Htnp state established "( dport = :$doh_port )" | grep '"hostpin"' | awk '{print $3}' | sort | tr '\n' ' '; }
hijacker_lines() { wc -l <"$LAB_HIJACK_LOG"; }
changes() { grep -c 'network changed' "$dir/serve.log"; }
wait_change() { # wait_change N: until the Nth change line, at most 5 s; prints the ms it took since $t0
    for _ in $(seq 100); do (( $(changes) >= $1 )) && break; sleep 0.05; done
    echo "after_ms=$(( $(now) - t0 ))"
}
# The new link, up before hostpin starts (its dump learns it).
ip link add hpv0 type veth peer name hpv1 && ip link set hpv0 up && ip link set hpv1 up
printf 'www.example.test\ncdn.example.test\ndual.example.test\n' >"$dir/names"
"$hostpin" serve --dns-listen 127.0.0.1:5390 --server "$LAB_COUNT_DNS" --server "$LAB_DOH_URL" \
    --bootstrap "dns.example.test=$LAB_DNS_TLS_ADDR" --ca-file "$LAB_CA_FILE" --timeout 3 \
    --preresolve "$dir/names" --metrics-listen 127.0.0.1:5391 --log-level debug 2>"$dir/serve.log" &
pid=$!
for _ in $(seq 300); do grep -qs 'listening on' "$dir/serve.log" && break; sleep 0.1; done
# The plain upstream is cut off (its packets dropped): the next lookup holds it down, DoH answers.
nft -f - <<NFT
table inet hostpin_net30 {
    chain output {
        type filter hook output priority 0; policy accept;
        meta l4proto { tcp, udp } th dport $count_port drop
    }
}
NFT
echo "== held"
dig +short +tries=1 +time=8 -p 5390 @127.0.0.1 alias.example.test A
curl -s http://127.0.0.1:5391/metrics | grep -E '^hostpin_upstream_health' 
echo "doh_connections=$(doh_connections)"
old_ports=$(doh_ports); echo "doh_ports=$old_ports"
nft delete table inet hostpin_net30   # reachable again
hijack_before=$(hijacker_lines)
before=$(queries)
echo "== change"
t0=$(now)
ip addr add 10.30.0.2/24 dev hpv0
ip route replace default via 10.30.0.1 dev hpv0
wait_change 1
sleep 1.0
echo "nsd_queries_after=$(( $(queries) - before ))"
new_ports=$(doh_ports); echo "doh_ports=$new_ports"
echo "old_ports_left=$(for p in $old_ports; do [[ " $new_ports " == *" $p "* ]] && echo -n "$p "; done)"
curl -s http://127.0.0.1:5391/metrics | grep -E '^hostpin_(upstream_health|network_)'
echo "== remove"
t0=$(now)
ip addr del 10.30.0.2/24 dev hpv0
wait_change 2
echo "== flood"
for i in $(seq 0 1999); do echo "addr add 10.31.$((i / 250)).$((i % 250 + 1))/32 dev hpv1"; done >"$dir/batch"
t0=$(now)
ip -batch "$dir/batch"
echo "batch_ms=$(( $(now) - t0 ))"
wait_change 3
sleep 2
echo "changes=$(changes)"
echo "== lifetime"
ip -6 addr add fd30::2/64 dev hpv0 valid_lft 600 preferred_lft 600 nodad
sleep 1.6
n=$(changes)
t0=$(now)
ip -6 addr change fd30::2/64 dev hpv0 valid_lft 900 preferred_lft 900
sleep 1.6
echo "lifetime_update_changes=$(( $(changes) - n ))"
echo "hijacker_queries=$(( $(hijacker_lines) - hijack_before ))"
kill -TERM "$pid"; wait "$pid"; echo "rc=$?"; pid=
echo "== off"
"$hostpin" serve --dns-listen 127.0.0.1:5392 --server "$LAB_COUNT_DNS" --no-network-watch --log-level debug 2>"$dir/off.log" &
pid=$!
for _ in $(seq 300); do grep -qs 'listening on' "$dir/off.log" && break; sleep 0.1; done
ip addr add 10.30.0.3/24 dev hpv0
sleep 1.6
echo "off_changes=$(grep -c 'network' "$dir/off.log")"
kill -TERM "$pid"; wait "$pid"; echo "rc=$?"; pid=
echo "== serve"; grep -E 'network|warning' "$dir/serve.log"
"""#

    /// The script's output: `key=value` lines by `== SECTION`, and every other line by section.
    private static func run() async throws -> (values: [String: [String: String]], lines: [String: [String]]) {
        let result = try await ProcessRunner.run(Lab.repositoryRoot.appendingPathComponent("scripts/lab").path,
                                                 ["onpath", "/bin/bash", "-c", script, "netchange", try HostPinBinary.path()],
                                                 environment: ["HOSTPIN_UPSTREAMS": ""])
        try #require(result.status == 0, "scripts/lab onpath failed: \(result.standardError)")
        var values: [String: [String: String]] = [:]
        var lines: [String: [String]] = [:]
        var section = ""
        for line in result.standardOutput.split(separator: "\n").map(String.init) {
            if line.hasPrefix("== ") {
                section = String(line.dropFirst(3))
                continue
            }
            lines[section, default: []].append(line)
            if let equals = line.firstIndex(of: "="), !line.hasPrefix("hostpin_"), !line.contains(" ") || line.hasPrefix("doh_ports=") || line.hasPrefix("old_ports_left=") {
                values[section, default: [:]][String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
        }
        return (values, lines)
    }

    @Test func changeClosesKeptConnectionsEndsHoldDownsRefreshesNamesAndAsksNoOtherResolver() async throws {
        let (values, lines) = try await Self.run()
        let held = try #require(values["held"])
        let heldLines = lines["held"] ?? []
        #expect(heldLines.contains("hostpin_upstream_healthy{upstream=\"127.0.0.1:5302\"} 0"), "\(heldLines)")
        #expect(Int(held["doh_connections"] ?? "") ?? 0 >= 1, "\(held)")
        let change = try #require(values["change"])
        let changeLines = lines["change"] ?? []
        #expect(Int(change["after_ms"] ?? "") ?? .max <= 2_000, "\(change)")
        #expect(change["old_ports_left"]?.trimmingCharacters(in: .whitespaces) == "", "the client's DoH connection is still open: \(change)")
        #expect(Int(change["nsd_queries_after"] ?? "") ?? 0 >= 3, "\(change)")
        #expect(changeLines.contains("hostpin_upstream_healthy{upstream=\"127.0.0.1:5302\"} 1"), "\(changeLines)")
        #expect(changeLines.contains("hostpin_network_changes_total 1"), "\(changeLines)")
        let answered = changeLines.first { $0.hasPrefix("hostpin_network_refreshes_total{outcome=\"answered\"} ") }
        #expect(Int(answered?.split(separator: " ").last ?? "") ?? 0 >= 6, "\(changeLines)")  // 3 names, A and AAAA
        #expect(Int(values["remove"]?["after_ms"] ?? "") ?? .max <= 2_000, "\(values["remove"] ?? [:])")
        let flood = try #require(values["flood"])
        #expect(flood["changes"] == "3", "2 000 addresses in \(flood["batch_ms"] ?? "?") ms: \(flood)")
        let lifetime = try #require(values["lifetime"])
        #expect(lifetime["lifetime_update_changes"] == "0", "\(lifetime)")
        #expect(lifetime["hijacker_queries"] == "0", "\(lifetime)")
        #expect(lifetime["rc"] == "0")
        #expect(values["off"]?["off_changes"] == "0", "\(lines["off"] ?? [])")
        let log = lines["serve"] ?? []
        #expect(log.count == 4, "\(log)")
        #expect(log.first?.hasPrefix("network changed (1 address added, 1 default route changed): ") == true, "\(log)")
        #expect(log.dropFirst().first?.hasPrefix("network changed (1 address removed): ") == true, "\(log)")
        #expect(log.dropFirst(2).first?.hasPrefix("network changed (2000 addresses added): ") == true, "\(log)")
        #expect(!log.contains { $0.contains("warning") }, "\(log)")
    }
}
