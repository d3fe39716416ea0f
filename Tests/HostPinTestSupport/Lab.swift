import Foundation
import HostPin

/// The running lab (`scripts/lab up`): its servers' addresses, read from the environment or from
/// `<repo>/.lab/env`, so tests work both under `scripts/test` and after a manual `scripts/lab up`.
public struct Lab: Sendable {
    /// The first trusted authoritative server (NSD).
    public let trustedDNS: Upstream
    /// The second trusted authoritative server (NSD), for failover.
    public let trustedDNS2: Upstream
    /// An NSD instance used only by suites that count queries (they run serialized).
    public let countDNS: Upstream
    /// The counting NSD's configuration file, for `nsd-control -c`.
    public let countNSDConf: String
    /// The signed lab world (DNSSEC; zones/signed/README.md): the lab root, `test.`, `example.test.` and
    /// its children, signed at every `scripts/lab up` and served by every trusted NSD; this is
    /// ``trustedDNS`` (on the on-path lab, its port the box does not rewrite). Nil for a lab started by
    /// an older `scripts/lab`.
    public let signedDNS: Upstream?
    /// The signed lab root's DS, in the format of Debian's dns-root-data files; `delv.conf` beside it holds
    /// the same anchor for `delv -a`. Nil for a lab started by an older `scripts/lab`.
    public let trustAnchor: String?
    /// The fault server (scripts/fault-dns): `<mode>.fault.test` answered as the mode says, every other
    /// name relayed verbatim to the trusted NSD. Nil for a lab whose environment lacks it.
    public let faultDNS: Upstream?
    /// The hijacker (dnsmasq): every name under example.test → 127.0.0.66.
    public let hijackDNS: Upstream
    /// The hijacker's query log.
    public let hijackLog: String
    /// nginx's HTTP port on every origin address.
    public let httpPort: UInt16
    /// nginx's HTTPS port on every origin address (certificates from the lab CA; 127.0.0.66 serves one
    /// for another name).
    public let httpsPort: UInt16
    /// The lab CA's certificate (PEM), made at `scripts/lab up`.
    public let caFile: String
    /// Unbound's DNS over HTTPS endpoint (RFC 8484), `https://dns.example.test:PORT/dns-query`;
    /// nil for a lab started by an older `scripts/lab`.
    public let dohURL: String?
    /// Unbound's DNS over TLS server (RFC 7858), `tls://dns.example.test:PORT`; nil for a lab started
    /// by an older `scripts/lab`.
    public let dotServer: String?
    /// The address `dns.example.test` (Unbound, DoH and DoT) listens on, without a port, for
    /// `--bootstrap dns.example.test=ADDRESS`; nil for a lab started by an older `scripts/lab`.
    public let dnsTLSAddress: String?
    /// The "internal" NSD of split DNS (zones/internal/): `corp.test` and `10.in-addr.arpa`, unsigned,
    /// unknown to the trusted NSDs; nil for a lab started by an older `scripts/lab`.
    public let internalDNS: Upstream?
    /// Inside `scripts/lab onpath` only: the address whose port 53 the on-path box leaves alone
    /// (127.0.0.53, for a local stub); nil in the ordinary lab.
    public let onPathStub: String?

    /// Why the lab cannot be used.
    public enum Problem: Error, CustomStringConvertible {
        case notRunning
        case missing(String)

        public var description: String {
            switch self {
            case .notRunning: "the lab is not running: start it with `scripts/lab up` (scripts/test does)"
            case .missing(let name): "the lab environment lacks \(name): restart it with `scripts/lab down; scripts/lab up`"
            }
        }
    }

    /// The repository's root folder.
    public static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The lab described by the environment, or by `.lab/env` when the environment has no `LAB_TRUSTED_DNS`.
    ///
    /// - Throws: ``Problem`` when neither describes a lab.
    public static func current() throws -> Lab {
        var values = ProcessInfo.processInfo.environment
        if values["LAB_TRUSTED_DNS"] == nil {
            let file = repositoryRoot.appendingPathComponent(".lab/env")
            guard let text = try? String(contentsOf: file, encoding: .utf8) else { throw Problem.notRunning }
            for line in text.split(separator: "\n") {
                let assignment = line.hasPrefix("export ") ? line.dropFirst("export ".count) : line
                guard let equals = assignment.firstIndex(of: "=") else { continue }
                let value = assignment[assignment.index(after: equals)...]
                values[String(assignment[..<equals])] = String(value).trimmingCharacters(in: CharacterSet(charactersIn: "'\""))
            }
        }
        func text(_ name: String) throws -> String {
            guard let value = values[name], !value.isEmpty else { throw Problem.missing(name) }
            return value
        }
        func optional(_ name: String) -> String? {
            guard let value = values[name], !value.isEmpty else { return nil }
            return value
        }
        func upstream(_ name: String) throws -> Upstream {
            guard let value = Upstream(try text(name)) else { throw Problem.missing(name) }
            return value
        }
        guard let port = UInt16(try text("LAB_HTTP_PORT")) else { throw Problem.missing("LAB_HTTP_PORT") }
        guard let httpsPort = UInt16(try text("LAB_HTTPS_PORT")) else { throw Problem.missing("LAB_HTTPS_PORT") }
        return Lab(trustedDNS: try upstream("LAB_TRUSTED_DNS"), trustedDNS2: try upstream("LAB_TRUSTED_DNS_2"),
                   countDNS: try upstream("LAB_COUNT_DNS"), countNSDConf: try text("LAB_COUNT_NSD_CONF"),
                   signedDNS: optional("LAB_SIGNED_DNS").flatMap { Upstream($0) },
                   trustAnchor: optional("LAB_TRUST_ANCHOR"), faultDNS: optional("LAB_FAULT_DNS").flatMap { Upstream($0) },
                   hijackDNS: try upstream("LAB_HIJACK_DNS"), hijackLog: try text("LAB_HIJACK_LOG"),
                   httpPort: port, httpsPort: httpsPort, caFile: try text("LAB_CA_FILE"),
                   dohURL: optional("LAB_DOH_URL"), dotServer: optional("LAB_DOT_SERVER"),
                   dnsTLSAddress: optional("LAB_DNS_TLS_ADDR"),
                   internalDNS: optional("LAB_INTERNAL_DNS").flatMap { Upstream($0) },
                   onPathStub: optional("LAB_ONPATH_STUB"))
    }

    /// Queries the counting NSD has received so far (`nsd-control stats_noreset`, `num.queries`). Async:
    /// the child runs on a thread of its own, never blocking a thread of Swift's pool (the proxy and the
    /// resolvers under test in the same process need both of its two threads).
    public func countedQueries() async throws -> Int {
        let result = try await ProcessRunner.run("/usr/sbin/nsd-control", ["-c", countNSDConf, "stats_noreset"])
        for line in result.standardOutput.split(separator: "\n") where line.hasPrefix("num.queries=") {
            if let count = Int(line.dropFirst("num.queries=".count)) { return count }
        }
        throw Problem.missing("num.queries in nsd-control output: \(result.standardOutput) \(result.standardError)")
    }
}
