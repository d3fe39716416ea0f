import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Address ranking (issue 30) against real servers: in the on-path lab's namespace (`scripts/lab onpath`),
/// `fast.example.test` has four A records in this order: 127.0.0.40, to which nftables drops every packet
/// (connecting hangs); 127.0.0.41, a relay that holds each connection 100 ms before passing it to the lab's
/// nginx (this kernel has no `netem`); 127.0.0.10, that nginx itself; 127.0.0.66, a sinkhole on loopback
/// that answers at once with `hijacker.invalid`'s certificate. Through `hostpin proxy` with curl
/// (CONNECT to 443): the first request succeeds (the race passes the black hole after 250 ms and the
/// relay wins, as in answer order); the proxy's background TLS probe (``RankingProbe``) meanwhile times
/// the verified handshakes, records the black hole at its 2 s timeout and excludes the sinkhole, which it
/// reports (the metric, a log line); every later request goes to 127.0.0.10 at once and the sinkhole is
/// never chosen. Needs root (network namespaces, nftables), as CI has.
@Suite(.enabled(if: geteuid() == 0, "the black hole needs root (network namespaces, nftables)"))
struct RankingFastNameTests {
    /// A TCP relay: LISTEN_IP PORT TARGET_IP DELAY_SECONDS; each connection waits DELAY before connecting on.
    static let relay = """
        import socket, sys, threading, time
        host, port, target, delay = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(64)
        def pipe(source, sink):
            try:
                while True:
                    data = source.recv(65536)
                    if not data:
                        break
                    sink.sendall(data)
            except OSError:
                pass
            try:
                sink.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        def serve(client):
            time.sleep(delay)
            try:
                origin = socket.create_connection((target, port))
            except OSError:
                client.close()
                return
            back = threading.Thread(target=pipe, args=(origin, client), daemon=True)
            back.start()
            pipe(client, origin)
            back.join()
            client.close()
            origin.close()
        while True:
            client, _ = listener.accept()
            threading.Thread(target=serve, args=(client,), daemon=True).start()
        """

    /// Both scripts' start: the relay on 127.0.0.41 (its PID in `relay_pid`) and the black hole on 127.0.0.40.
    static let blackHoleAndRelay = """
        python3 -c "$relay" 127.0.0.41 443 127.0.0.10 0.1 &
        relay_pid=$!
        nft add table inet hostpin_rank
        nft add chain inet hostpin_rank output '{ type filter hook output priority 0; policy accept; }'
        nft add rule inet hostpin_rank output ip daddr 127.0.0.40 tcp dport 443 drop
        """

    /// Runs inside the namespace. Each section: `== NAME`, the output (standard error too), then `rc=STATUS`.
    static let script = """
        hostpin=$1
        relay=$2
        dns=$LAB_TRUSTED_DNS_2
        section() {
            local name=$1; shift
            echo "== $name"
            "$@" 2>&1
            echo "rc=$?"
        }
        via_proxy() {
            curl -sS --max-time 20 -x http://127.0.0.1:8118 --cacert "$LAB_CA_FILE" -w ' ttfb=%{time_starttransfer}\\n' \\
                https://fast.example.test/whoami
        }
        sinkholes() { curl -s http://127.0.0.1:9153/metrics | grep '^hostpin_proxy_sinkhole_addresses_total '; }
        logs=$(mktemp -d)
        trap 'rm -rf "$logs"' EXIT
        \(blackHoleAndRelay)
        "$hostpin" proxy --listen 127.0.0.1:8118 --server "$dns" --allow-private --ca-file "$LAB_CA_FILE" \\
            --metrics-listen 127.0.0.1:9153 >"$logs/access.log" 2>"$logs/stderr" &
        proxy=$!
        for _ in $(seq 200); do
            curl -s -o /dev/null -x http://127.0.0.1:8118 "http://www.example.test:$LAB_HTTP_PORT/whoami" \\
                && (exec 3<>/dev/tcp/127.0.0.41/443) 2>/dev/null && break
            sleep 0.1
        done
        section probe-drop curl -sS -o /dev/null --connect-timeout 1 --cacert "$LAB_CA_FILE" \\
            --resolve fast.example.test:443:127.0.0.40 https://fast.example.test/whoami
        section probe-sinkhole curl -sS -o /dev/null --cacert "$LAB_CA_FILE" \\
            --resolve fast.example.test:443:127.0.0.66 https://fast.example.test/whoami
        section first via_proxy
        # The probe: 127.0.0.40 (2 s, timed out), .41, .10, then the sinkhole; within 10 s.
        for _ in $(seq 100); do
            [[ $(sinkholes) == 'hostpin_proxy_sinkhole_addresses_total 1' ]] && break
            sleep 0.1
        done
        for n in 2 3 4 5 6; do section "request-$n" via_proxy; done
        section metrics sinkholes
        kill "$proxy"
        wait "$proxy"
        kill "$relay_pid"
        echo "== access-log"
        cat "$logs/access.log"
        echo "== stderr"
        cat "$logs/stderr"
        """

    /// The access log's pinned address for each CONNECT to `fast.example.test:443`, in order.
    static func pinned(in log: [String]) -> [String] {
        log.compactMap { line in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count >= 5, fields[3].contains("fast.example.test") else { return nil }
            return fields[4]
        }
    }

    /// curl's `ttfb=SECONDS` suffix of a section's output.
    static func timeToFirstByte(_ section: HappyEyeballsBlackHoleTests.Section?) -> Double? {
        section?.lines.joined(separator: "\n").components(separatedBy: " ttfb=").last.flatMap(Double.init)
    }

    @Test func secondAndLaterRequestsGoToTheFastAddressAndTheSinkholeIsNeverChosen() async throws {
        let result = try await ProcessRunner.run(Lab.repositoryRoot.appendingPathComponent("scripts/lab").path,
                                                 ["onpath", "/bin/bash", "-c", Self.script, "ranking",
                                                  try HostPinBinary.path(), Self.relay],
                                                 environment: ["HOSTPIN_UPSTREAMS": ""])
        try #require(result.status == 0, "scripts/lab onpath failed: \(result.standardError)")
        let sections = HappyEyeballsBlackHoleTests.sections(of: result.standardOutput)
        // The black hole is real (curl's connect times out, 28, not refused, 7); the sinkhole's certificate
        // is for another name (curl's 60).
        #expect(sections["probe-drop"]?.status == 28, "\(result.standardOutput)")
        #expect(sections["probe-sinkhole"]?.status == 60, "\(result.standardOutput)")

        let first = try #require(sections["first"])
        #expect(first.status == 0 && first.lines.first?.hasPrefix("origin=www host=fast.example.test") == true, "\(first)")
        // The race waited 250 ms for the black hole, then the relay's 100 ms.
        let firstTime = try #require(Self.timeToFirstByte(first))
        #expect(firstTime > 0.3, "\(first)")
        for n in 2...6 {
            let later = try #require(sections["request-\(n)"])
            #expect(later.status == 0 && later.lines.first?.hasPrefix("origin=www host=fast.example.test") == true, "\(later)")
            let time = try #require(Self.timeToFirstByte(later))
            #expect(time < 0.25, "request \(n): \(later)")  // no wait for the black hole, nor the relay's 100 ms
        }
        #expect(sections["metrics"]?.lines == ["hostpin_proxy_sinkhole_addresses_total 1"], "\(result.standardOutput)")
        let pinned = Self.pinned(in: try #require(sections["access-log"]).lines)
        #expect(pinned == ["127.0.0.41:443"] + Array(repeating: "127.0.0.10:443", count: 5), "\(sections["access-log"]?.lines ?? [])")
        let reported = sections["stderr"]?.lines.filter { $0.contains("likely sinkhole") } ?? []
        #expect(reported.count == 1, "\(sections["stderr"]?.lines ?? [])")
        #expect(reported.first?.hasPrefix("hostpin proxy: 127.0.0.66:443 is a likely sinkhole for fast.example.test (excluded): ") == true,
                "\(reported)")
    }

    /// With `fast.example.test` in `--preresolve`'s list, the proxy probes it at start, before any request:
    /// the sinkhole is reported with no client having asked, and the very first tunnel goes to the fast
    /// address.
    static let preresolvedScript = """
        hostpin=$1
        relay=$2
        dns=$LAB_TRUSTED_DNS_2
        logs=$(mktemp -d)
        trap 'rm -rf "$logs"' EXIT
        echo fast.example.test >"$logs/names"
        \(blackHoleAndRelay)
        "$hostpin" proxy --listen 127.0.0.1:8118 --server "$dns" --allow-private --ca-file "$LAB_CA_FILE" \\
            --preresolve "$logs/names" --metrics-listen 127.0.0.1:9153 >"$logs/access.log" 2>"$logs/stderr" &
        proxy=$!
        for _ in $(seq 100); do
            [[ $(curl -s http://127.0.0.1:9153/metrics | grep '^hostpin_proxy_sinkhole_addresses_total ') \\
                == 'hostpin_proxy_sinkhole_addresses_total 1' ]] && break
            sleep 0.1
        done
        echo "== before"
        curl -s http://127.0.0.1:9153/metrics | grep '^hostpin_proxy_sinkhole_addresses_total '
        echo "rc=$?"
        echo "== first"
        curl -sS --max-time 20 -x http://127.0.0.1:8118 --cacert "$LAB_CA_FILE" -w ' ttfb=%{time_starttransfer}\\n' \\
            https://fast.example.test/whoami 2>&1
        echo "rc=$?"
        kill "$proxy"
        wait "$proxy"
        kill "$relay_pid"
        echo "== access-log"
        cat "$logs/access.log"
        """

    @Test func aPreresolvedNameIsProbedBeforeItsFirstRequest() async throws {
        let result = try await ProcessRunner.run(Lab.repositoryRoot.appendingPathComponent("scripts/lab").path,
                                                 ["onpath", "/bin/bash", "-c", Self.preresolvedScript, "ranking",
                                                  try HostPinBinary.path(), Self.relay],
                                                 environment: ["HOSTPIN_UPSTREAMS": ""])
        try #require(result.status == 0, "scripts/lab onpath failed: \(result.standardError)")
        let sections = HappyEyeballsBlackHoleTests.sections(of: result.standardOutput)
        #expect(sections["before"]?.lines == ["hostpin_proxy_sinkhole_addresses_total 1"], "\(result.standardOutput)")
        let first = try #require(sections["first"])
        #expect(first.status == 0 && first.lines.first?.hasPrefix("origin=www host=fast.example.test") == true, "\(first)")
        #expect(try #require(Self.timeToFirstByte(first)) < 0.25, "\(first)")
        #expect(Self.pinned(in: try #require(sections["access-log"]).lines) == ["127.0.0.10:443"], "\(result.standardOutput)")
    }
}
