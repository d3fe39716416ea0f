import Foundation
import HostPinTestSupport
import Testing

/// A real browser through `hostpin proxy`: headless Chromium, trusting the lab CA, loads
/// `www.example.test` over HTTP and HTTPS (CONNECT) through the proxy and gets the true origin
/// (`origin=www`); the same browser without the proxy, its resolution mapped to the hijacker's address,
/// does not. The browser resolves nothing itself (`--host-resolver-rules`); its own background requests
/// to the outside world get 502 from the proxy, whose resolver knows only the lab's zone.
@Suite(.enabled(if: HeadlessChromium.isInstalled, "chromium and certutil (libnss3-tools) are not installed: scripts/test installs them"),
       .serialized)
struct ChromiumProxyTests {
    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    /// Every name the browser would resolve fails, except the proxy's own address.
    static let throughTheProxy = "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
    /// www.example.test resolves to the hijacker's address (as the lab's hijacking resolver answers);
    /// every other name fails.
    static let hijacked = "MAP www.example.test 127.0.0.66, MAP * ~NOTFOUND"

    private func url(https: Bool) -> String {
        https ? "https://www.example.test:\(lab.httpsPort)/whoami" : "http://www.example.test:\(lab.httpPort)/whoami"
    }

    @Test(arguments: [true, false])
    func pageThroughTheProxyComesFromTheTrueOrigin(https: Bool) async throws {
        let accessLog = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-chromium-log-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: accessLog.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: accessLog) }
        let proxy = try await RunningProxy(lab: lab, extra: ["--ca-file", lab.caFile, "--allow-connect-port", "\(lab.httpsPort)"],
                                           standardOutput: try FileHandle(forWritingTo: accessLog))
        let browser = try await HeadlessChromium(trusting: lab.caFile)
        let page = try await browser.dumpDOM(url(https: https), proxy: proxy.address, resolverRules: Self.throughTheProxy)
        let port = https ? lab.httpsPort : lab.httpPort
        #expect(page.status == 0)
        #expect(page.dom.contains("origin=www host=www.example.test:\(port)\n"), "\(page.dom)\n\(page.log.suffix(2000))")
        // The proxy carried it, to the pinned address.
        let log = try String(contentsOf: accessLog, encoding: .utf8)
        let request = https ? "CONNECT www.example.test:\(port) 127.0.0.10:\(port) 200" : "GET http://www.example.test:\(port)/whoami 127.0.0.10:\(port) 200"
        #expect(log.contains(request), "\(log)")
    }

    @Test func hijackedPlainPageWithoutTheProxyComesFromTheHijacker() async throws {
        let browser = try await HeadlessChromium(trusting: lab.caFile)
        let page = try await browser.dumpDOM(url(https: false), proxy: nil, resolverRules: Self.hijacked)
        #expect(page.status == 0)
        #expect(page.dom.contains("origin=hijacker host=www.example.test:\(lab.httpPort)\n"), "\(page.dom)")
        #expect(!page.dom.contains("origin=www"))
    }

    @Test func hijackedHTTPSPageWithoutTheProxyFailsTheCertificateCheck() async throws {
        let browser = try await HeadlessChromium(trusting: lab.caFile)
        let page = try await browser.dumpDOM(url(https: true), proxy: nil, resolverRules: Self.hijacked)
        #expect(!page.dom.contains("origin="), "\(page.dom)")
        // The hijacker's certificate is the lab CA's, for hijacker.invalid: trusted, for another name.
        #expect(page.log.contains("Page load failed: net::ERR_CERT_COMMON_NAME_INVALID"), "\(page.log.suffix(2000))")
    }
}
