import Foundation
import HostPin
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An NSD instance owned by one test: it serves the zone `example.test` (by default a copy of
/// `zones/example.test.zone`), or the zones it is given, on a free 127.0.0.1 port, and the test may stop it
/// and start it again on the same port (``stop()``, ``start()``), or with another zone (``serve(zone:)``),
/// without touching the lab's shared servers. Queries are counted with `nsd-control stats_noreset` over a
/// unix socket: all of them (``queries()``), or per zone (``queriesPerZone()``, NSD's `zonestats`: a test
/// that counts per name gives each name a zone of its own). Processes are stopped by PID.
public final class AuthoritativeServer: Sendable {
    /// Why the server could not be started or asked.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A zone to serve: its name (the origin, without the final dot) and its zone file's text.
    public struct Zone: Sendable {
        public let name: String
        public let text: String

        public init(name: String, text: String) {
            self.name = name
            self.text = text
        }
    }

    /// Where clients send queries (UDP and TCP).
    public let address: Upstream
    /// The server's configuration file, for `nsd-control -c`.
    public let configurationFile: String
    private let directory: String
    /// The name whose A record ``start()`` waits for.
    private let readinessName: String
    // The running `nsd -d` process, if any; replaced by `start()`, cleared by `stop()`.
    private let process = Mutex<Process?>(nil)

    /// Writes the configuration and starts NSD; returns once it answers `www.example.test`.
    ///
    /// - Parameter zone: The zone file's text (`$ORIGIN example.test.`; it must give `www` an A record);
    ///   the lab's zone by default.
    /// - Throws: ``Failure`` when no port is free or NSD does not answer within 30 seconds (a loaded machine starts it slowly).
    public convenience init(zone: String? = nil) async throws {
        let labZone = Lab.repositoryRoot.appendingPathComponent("zones/example.test.zone")
        try await self.init(zones: [Zone(name: "example.test", text: zone ?? String(contentsOf: labZone, encoding: .utf8))],
                            readinessName: "www.example.test")
    }

    /// Writes the configuration for `zones` and starts NSD; returns once it answers `readinessName`.
    ///
    /// - Parameters:
    ///   - zones: The zones, each in a file of its own and, for ``queriesPerZone()``, a statistics group
    ///     of its own (NSD's `zonestats: "%s"`).
    ///   - readinessName: A name with an A record in one of the zones.
    /// - Throws: ``Failure`` when no port is free or NSD does not answer within 30 seconds.
    public init(zones: [Zone], readinessName: String) async throws {
        // A short path: the control socket's must fit in sockaddr_un (108 bytes).
        var template = Array("/tmp/hostpin-nsd-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure(description: "mkdtemp failed") }
        directory = String(cString: made)
        self.readinessName = readinessName
        let port = try Self.freePort()
        address = Upstream(address: .loopbackV4, port: port)
        configurationFile = directory + "/nsd.conf"
        for zone in zones {
            try zone.text.write(toFile: directory + "/" + Self.zoneFile(zone.name), atomically: true, encoding: .utf8)
        }
        let zoneClauses = zones.map { zone in
            """
            zone:
                name: "\(zone.name)"
                zonefile: "\(Self.zoneFile(zone.name))"
                include-pattern: "counted"

            """
        }.joined()
        let configuration = """
            server:
                ip-address: 127.0.0.1@\(port)
                do-ip4: yes
                do-ip6: no
                reuseport: no
                server-count: 1
                verbosity: 0
                username: ""
                chroot: ""
                database: ""
                zonesdir: "\(directory)"
                pidfile: "\(directory)/nsd.pid"
                logfile: "\(directory)/nsd.log"
                zonelistfile: "\(directory)/zone.list"
                xfrdfile: "\(directory)/xfrd.state"
                xfrdir: "\(directory)"
                hide-version: yes
                rrl-ratelimit: 0
                rrl-whitelist-ratelimit: 0
            remote-control:
                control-enable: yes
                control-interface: "\(directory)/nsd.sock"
            pattern:
                name: "counted"
                zonestats: "%s"

            """ + zoneClauses
        try configuration.write(toFile: configurationFile, atomically: true, encoding: .utf8)
        try await start()
    }

    deinit {
        _ = signalStop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts NSD (again) on ``address``; returns once it answers `www.example.test` and `nsd-control`
    /// reaches it. Retries while the previous instance's sockets are being released.
    ///
    /// - Throws: ``Failure`` after 30 seconds without an answer.
    public func start() async throws {
        await stop()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let nsd = Process()
            nsd.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            nsd.arguments = ["python3", "-c", Self.withSignalsUnblocked, "/usr/sbin/nsd", "-d", "-c", configurationFile]
            nsd.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            nsd.standardError = FileHandle(forWritingAtPath: "/dev/null")
            nsd.standardInput = FileHandle(forReadingAtPath: "/dev/null")
            try nsd.run()
            process.withLock { $0 = nsd }
            while Date() < deadline && isRunning {
                if await answers(), (try? await queries()) != nil { return }
                try await Task.sleep(for: .milliseconds(50))
            }
            await stop()  // exited (port not yet released) or never answered: try once more
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Failure(description: "NSD on \(address) did not answer within 30 s (log: \(directory)/nsd.log)")
    }

    /// Restarts NSD serving `zone` (the zone file's text, as for ``init(zone:)``) as `example.test` instead.
    ///
    /// - Throws: ``Failure`` as ``start()`` does, or when the zone file cannot be written.
    public func serve(zone: String) async throws {
        await stop()
        try zone.write(toFile: directory + "/" + Self.zoneFile("example.test"), atomically: true, encoding: .utf8)
        try await start()
    }

    /// The file name of zone `name`'s zone file.
    private static func zoneFile(_ name: String) -> String { name + ".zone" }

    /// Stops NSD: SIGTERM to its PID (it stops its own children), then waits until it has exited
    /// (polling: no thread of the cooperative pool is blocked). Idempotent.
    public func stop() async {
        guard let nsd = signalStop() else { return }
        while nsd.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
    }

    private func signalStop() -> Process? {
        guard let nsd = process.withLock({ process -> Process? in
            defer { process = nil }
            return process
        }) else { return nil }
        if nsd.isRunning { nsd.terminate() }
        return nsd
    }

    /// Whether the NSD process is running.
    public var isRunning: Bool { process.withLock { $0?.isRunning ?? false } }

    /// Queries received since the last start (`nsd-control stats_noreset`, `num.queries`).
    ///
    /// - Throws: ``Failure`` when `nsd-control` cannot reach the server.
    public func queries() async throws -> Int {
        let result = try await ProcessRunner.run("/usr/sbin/nsd-control", ["-c", configurationFile, "stats_noreset"])
        for line in result.standardOutput.split(separator: "\n") where line.hasPrefix("num.queries=") {
            if let count = Int(line.dropFirst("num.queries=".count)) { return count }
        }
        throw Failure(description: "nsd-control: \(result.standardOutput) \(result.standardError)")
    }

    /// Queries received since the last start, per zone (`nsd-control stats_noreset`, each zone's
    /// `ZONE.num.queries`), keyed by zone name.
    ///
    /// - Throws: ``Failure`` when `nsd-control` cannot reach the server.
    public func queriesPerZone() async throws -> [String: Int] {
        let result = try await ProcessRunner.run("/usr/sbin/nsd-control", ["-c", configurationFile, "stats_noreset"])
        guard result.status == 0 else { throw Failure(description: "nsd-control: \(result.standardOutput) \(result.standardError)") }
        var counts: [String: Int] = [:]
        for line in result.standardOutput.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].hasSuffix(".num.queries"), let count = Int(parts[1]) else { continue }
            counts[String(parts[0].dropLast(".num.queries".count))] = count
        }
        return counts
    }

    /// One short c-ares lookup of the readiness name (not counted by tests: they read ``queries()`` after).
    private func answers() async -> Bool {
        var configuration = TrustedResolver.Configuration.ownServer([address])  // an unsigned zone
        configuration.timeout = .milliseconds(100)
        configuration.tries = 1
        guard let probe = try? TrustedResolver(configuration: configuration) else { return false }
        return (try? await probe.resolve(readinessName, family: .v4)) != nil
    }

    /// A Python one-liner that clears the signal mask and execs its arguments. The test process blocks
    /// most signals and Foundation's `Process` passes that mask on, so NSD would never see our SIGTERM.
    private static let withSignalsUnblocked =
        "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, set()); os.execv(sys.argv[1], sys.argv[1:])"

    /// A port free for both UDP and TCP on 127.0.0.1 (``DnsmasqServer`` and ``RedisServer`` take one
    /// too), for a server started next. Chosen at random below the kernel's ephemeral range: a port the
    /// kernel picked (port 0) is handed out again to the next `connect(2)` anywhere on the machine, and
    /// the tests make thousands, so one could take it before the server binds it (seen in CI: dnsmasq's
    /// "Address already in use").
    static func freePort() throws -> UInt16 {
        let ephemeralStart = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
            .flatMap { $0.split(whereSeparator: \.isWhitespace).first.flatMap { UInt16($0) } } ?? 32_768
        let below: ClosedRange<UInt16>? = ephemeralStart > 11_024 ? 10_000...(ephemeralStart - 1) : nil
        for _ in 0..<50 {
            let udp = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            let tcp = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(udp); close(tcp) }
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr("127.0.0.1")
            local.sin_port = (below.map { UInt16.random(in: $0) } ?? 0).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(udp, $0, length) == 0 && getsockname(udp, $0, &length) == 0
                }
            }
            guard bound else { continue }
            let tcpBound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(tcp, $0, length) == 0 }
            }
            if tcpBound { return UInt16(bigEndian: local.sin_port) }
        }
        throw Failure(description: "no port free for UDP and TCP on 127.0.0.1")
    }
}
