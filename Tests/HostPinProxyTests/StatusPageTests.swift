import Foundation
import HostPin
import HostPinNet
@testable import HostPinProxy
import HostPinTestSupport
import Testing

/// The status page and `/status.json` on a real metrics endpoint: a hostile reason in the watch's
/// findings (as a hijacker's certificate could carry) shows as text in the page and never as markup in the
/// JSON, the page's own script never parses data as HTML and loads nothing from elsewhere, and nothing on
/// the listener takes a method that could change state.
@Suite(.serialized) struct StatusPageTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    static let hostile = #"</script><script>alert(1)</script><img src=x onerror="alert(2)">&amp;'"#

    /// An endpoint whose findings hold one report for www.example.test with the hostile reason.
    private func endpoint() throws -> (MetricsEndpoint, SocketAddress) {
        let trusted = try TrustedResolver(upstreams: [lab.trustedDNS])
        let findings = HijackFindings()
        let name = try HostName.parse("www.example.test")
        let truth = Resolution(name: name, addresses: [ResolvedAddress(address: IPAddress("127.0.0.10")!, ttl: 60)], cnames: [],
                               upstream: lab.trustedDNS, source: .upstream, receivedAt: Date())
        findings.record(HijackReport(name: name, family: .v4, trusted: .addresses(truth), local: [IPAddress("127.0.0.66")!],
                                     reasons: [HijackReason(.badCertificate, Self.hostile)]))
        let endpoint = MetricsEndpoint(configuration: .init(listenAddress: SocketAddress("127.0.0.1:0")!),
                                       metrics: ServiceMetrics(resolver: trusted, cache: ResolutionCache(), dns: DNSQueryMetrics(),
                                                               findings: findings))
        return (endpoint, try endpoint.start())
    }

    /// Sends `request` on a new connection and returns the whole reply (head and body) until the close.
    private static func exchange(_ address: SocketAddress, _ request: String) async throws -> String {
        try await MetricsEndpointTests.exchange(address, request)
    }

    private static func get(_ path: String) -> String {
        "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    }

    @Test func aHostileNameCannotBeAFindingsName() {
        // Names are normalised host names: `<` and `>` never reach the page through a name.
        #expect(throws: ResolutionError.self) { try HostName.parse("<script>.example.test") }
    }

    @Test func aHostileReasonIsEscapedInTheJSONAndShowsAsTextInThePage() async throws {
        let (endpoint, address) = try endpoint()
        defer { Task { await endpoint.stop() } }
        let json = try await Self.exchange(address, Self.get("/status.json"))
        let (head, body) = try #require(Self.split(json))
        #expect(head.hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"))
        #expect(head.contains("\r\nX-Content-Type-Options: nosniff\r\n"))
        // Not a byte that could open or close a tag, nor an ampersand or quote of HTML, in the whole JSON.
        #expect(!body.contains("<") && !body.contains(">") && !body.contains("&") && !body.contains("'"), "\(body)")
        #expect(body.contains(#"\u003c/script\u003e\u003cscript\u003ealert(1)"#))
        // …and it reads back as the very reason.
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(body.utf8))
        let finding = try #require(value["findings"]?["items"]?.items?.first)
        #expect(finding["name"] == .string("www.example.test"))
        #expect(finding["reasons"]?.items?.first?["detail"] == .string(Self.hostile))
        #expect(finding["local"] == .array([.string("127.0.0.66")]) && finding["trusted"] == .array([.string("127.0.0.10")]))

        let page = try await Self.exchange(address, Self.get("/"))
        let (pageHead, html) = try #require(Self.split(page))
        #expect(pageHead.hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"))
        #expect(html.contains("<td>bad-certificate: &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x "
                              + "onerror=&quot;alert(2)&quot;&gt;&amp;amp;&#39;</td>"), "\(html)")
        #expect(html.components(separatedBy: "<script").count == 2, "only the page's own script element")
        #expect(!html.contains("<img"))
        // The policy lets only the script and style carrying this response's nonce run.
        let policy = try #require(pageHead.split(separator: "\r\n").first { $0.hasPrefix("Content-Security-Policy: ") })
        let nonce = try #require(policy.split(separator: "'nonce-").dropFirst().first?.prefix { $0 != "'" })
        #expect(nonce.count == 32)
        #expect(policy.hasPrefix("Content-Security-Policy: default-src 'none'; script-src 'nonce-\(nonce)'; "))
        #expect(html.contains("<script nonce=\"\(nonce)\">") && html.contains("<style nonce=\"\(nonce)\">"))
        // A new nonce for every response.
        let again = try await Self.exchange(address, Self.get("/"))
        #expect(!again.contains("'nonce-\(nonce)'"))
    }

    @Test func thePageScriptNeverParsesDataAsHTMLAndLoadsNothingFromElsewhere() {
        for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function(", "srcdoc", "DOMParser",
                     "createContextualFragment"] {
            #expect(!StatusPage.script.contains(sink), "\(sink)")
        }
        #expect(StatusPage.script.contains("textContent"))
        // The only fetch is /status.json on the same origin; the only URL is the SVG namespace name.
        #expect(StatusPage.script.components(separatedBy: "fetch(").count == 2 && StatusPage.script.contains(#"fetch("/status.json""#))
        let page = StatusPage.html(.object([:]), nonce: "0")
        #expect(page.components(separatedBy: "http").count == 2, "no URL in the page but its script's SVG namespace")
        #expect(StatusPage.script.components(separatedBy: "http").count == 2 && StatusPage.script.contains("http://www.w3.org/2000/svg"))
        #expect(!page.contains("src=") && !page.contains("href=") && !StatusPage.style.contains("url(") && !StatusPage.style.contains("@import"))
    }

    @Test(arguments: ["POST", "PUT", "DELETE", "PATCH"], ["/", "/status.json"])
    func onlyGETAndHEADAreAnswered(_ method: String, _ path: String) async throws {
        let (endpoint, address) = try endpoint()
        defer { Task { await endpoint.stop() } }
        let reply = try await Self.exchange(address, "\(method) \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        #expect(reply.hasPrefix("HTTP/1.1 405 Method Not Allowed\r\n") && reply.contains("\r\nAllow: GET, HEAD\r\n"), "\(reply)")
    }

    @Test func headOfThePageGivesItsLengthWithoutTheBody() async throws {
        let (endpoint, address) = try endpoint()
        defer { Task { await endpoint.stop() } }
        let reply = try await Self.exchange(address, "HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let (head, body) = try #require(Self.split(reply))
        #expect(body.isEmpty)
        let length = try #require(head.split(separator: "\r\n").first { $0.hasPrefix("Content-Length: ") }.flatMap { Int($0.dropFirst(16)) })
        #expect(length > 8000, "the page with its style and script: \(length) bytes")
    }

    private static func split(_ reply: String) -> (head: String, body: String)? {
        guard let range = reply.range(of: "\r\n\r\n") else { return nil }
        return (String(reply[..<range.upperBound]), String(reply[range.upperBound...]))
    }
}
