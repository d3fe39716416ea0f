import Foundation
import HostPin
import HostPinNet
import HostPinService
import HostPinTestSupport
import Synchronization
import Testing

/// What the service tests share: a configuration on the lab's trusted upstream with the stub and the
/// proxy on free loopback ports, a log that keeps its lines, and clients for the stub (a resolver that
/// asks it) and for the proxy (curl).
enum ServiceLab {
    /// The stub on 127.0.0.1 and the proxy on 127.0.0.1, both on port 0, on the lab's first NSD.
    static func configuration(dns: Bool = true, proxy: Bool = true) throws -> ServiceConfiguration {
        var configuration = ServiceConfiguration(upstreams: [try Lab.current().trustedDNS])
        configuration.resolverConfiguration.dnssec = try Lab.current().dnssec()  // the lab's signed world
        if dns { configuration.dns = ServiceConfiguration.DNS(listenAddresses: [SocketAddress("127.0.0.1:0")!]) }
        if proxy {
            var options = ProxyOptions(listenAddress: SocketAddress("127.0.0.1:0")!)
            options.configuration.allowPrivate = true  // the lab's origins are on loopback
            configuration.proxyOptions = options
        }
        // The access log on a file of the test's, not on the test runner's standard output.
        configuration.log.accessLog = FileManager.default.temporaryDirectory
            .appendingPathComponent("hostpin-service-\(UUID().uuidString).log").path
        return configuration
    }

    /// Rules from their JSON.
    static func rules(_ json: String) throws -> Rules {
        try Rules(json: Data(json.utf8), relativeTo: URL(fileURLWithPath: "/"))
    }

    /// What the stub answered: the RCODE's name (`NOERROR`, `NXDOMAIN`) and the A records' addresses.
    struct Answer: Equatable, CustomStringConvertible {
        let status: String
        let addresses: [String]

        var description: String { "\(status) \(addresses)" }

        static func noError(_ addresses: String...) -> Answer { Answer(status: "NOERROR", addresses: addresses) }
        static let nxdomain = Answer(status: "NXDOMAIN", addresses: [])
    }

    /// Asks the stub at `address` for `name`'s A records with dig, as any DNS client would.
    static func ask(_ address: SocketAddress, _ name: String) async throws -> Answer {
        let result = try await ProcessRunner.run("/usr/bin/dig", ["@\(address.address)", "-p", "\(address.port)", "+time=10",
                                                                  "+tries=2", "+noall", "+comments", "+answer", name, "A"])
        var status = "no answer: \(result.standardOutput) \(result.standardError)"
        var addresses: [String] = []
        for line in result.standardOutput.split(separator: "\n") {
            if let range = line.range(of: "status: ") {
                status = String(line[range.upperBound...].prefix { $0 != "," })
            } else if !line.hasPrefix(";") {
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                if fields.count == 5, fields[3] == "A" { addresses.append(String(fields[4])) }
            }
        }
        return Answer(status: status, addresses: addresses)
    }

    /// `curl -x http://PROXY URL`: the status and the body.
    static func curl(_ proxy: SocketAddress, _ url: String, _ extra: [String] = []) async throws -> (status: String, body: String) {
        let result = try await ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "30", "-x", "http://\(proxy)",
                                                                   "-w", "\n%{http_code}"] + extra + [url])
        var lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let status = lines.popLast() ?? ""
        return (status, lines.joined(separator: "\n"))
    }

    /// `http://www.example.test:PORT/PATH` on the lab's nginx.
    static func url(_ host: String = "www.example.test", _ path: String = "/whoami") throws -> String {
        "http://\(host):\(try Lab.current().httpPort)\(path)"
    }
}

/// A service log that keeps every line written, for the tests to read.
final class KeptLog: Sendable {
    private final class Lines: Sendable {
        let lines = Mutex<[String]>([])
    }

    private let kept: Lines
    let log: ServiceLog

    init(level: LogLevel = .info) {
        let kept = Lines()
        self.kept = kept
        log = ServiceLog(level: level) { _, line in kept.lines.withLock { $0.append(line) } }
    }

    var all: [String] { kept.lines.withLock { $0 } }

    func contains(_ text: String) -> Bool { all.contains { $0.contains(text) } }
}
