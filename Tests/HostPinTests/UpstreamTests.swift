import HostPin
import Testing

@Suite struct UpstreamTests {
    @Test(arguments: [
        ("127.0.0.1", "127.0.0.1:53"),
        ("127.0.0.1:5300", "127.0.0.1:5300"),
        ("::1", "[::1]:53"),
        ("[::1]", "[::1]:53"),
        ("[::1]:5300", "[::1]:5300"),
        ("[2001:db8::1]:65535", "[2001:db8::1]:65535"),
        ("https://dns.example.test/dns-query", "https://dns.example.test/dns-query"),
        ("HTTPS://DNS.Example.Test:443/dns-query", "https://dns.example.test/dns-query"),
        ("https://[::1]:8443/q", "https://[::1]:8443/q"),
        ("tls://dns.example.test", "tls://dns.example.test"),
        ("tls://dns.example.test:853", "tls://dns.example.test"),
        ("tls://127.0.0.1:8853", "tls://127.0.0.1:8853"),
    ])
    func parsesAndPrintsBack(text: String, printed: String) throws {
        #expect(try Upstream.parse(text).description == printed)
        #expect(Upstream(text)?.description == printed)
    }

    @Test func plainAndEncryptedFormsMakeTheirKind() throws {
        #expect(try Upstream.parse("127.0.0.1:5300").kind == .plain(IPAddress("127.0.0.1")!, port: 5300))
        #expect(try Upstream.parse("127.0.0.1:5300").isPlain)
        let doh = try Upstream.parse("https://dns.example.test:8443/dns-query")
        #expect(doh.kind == .encrypted(try EncryptedUpstream.parse("https://dns.example.test:8443/dns-query")))
        #expect(!doh.isPlain)
        #expect(try Upstream.parse("tls://dns.example.test").encrypted?.port == 853)
    }

    @Test(arguments: [
        ("dns.example.test", Upstream.ParseError.notAnUpstream("dns.example.test")),
        ("dns.example.test:53", .notAnUpstream("dns.example.test:53")),
        ("127.0.0.1:0", .badPort("127.0.0.1:0")),
        ("127.0.0.1:65536", .badPort("127.0.0.1:65536")),
        ("127.0.0.1:", .badPort("127.0.0.1:")),
        ("127.0.0.1:+53", .badPort("127.0.0.1:+53")),
        ("[::1]x", .notAnUpstream("[::1]x")),
        ("[127.0.0.1]:53", .notAnUpstream("[127.0.0.1]:53")),
        ("127.0.0.1\u{0}junk", .notAnUpstream("127.0.0.1\u{0}junk")),
        ("", .notAnUpstream("")),
        ("https://dns.example.test", .encrypted(.missingPath("https://dns.example.test"))),
        ("quic://dns.example.test", .encrypted(.unsupportedScheme("quic://dns.example.test"))),
        ("tls://dns.example.test:0", .encrypted(.badPort("tls://dns.example.test:0"))),
    ])
    func rejectsWhatIsNoUpstream(text: String, error: Upstream.ParseError) {
        #expect(throws: error) { try Upstream.parse(text) }
        #expect(Upstream(text) == nil)
    }

    @Test(arguments: ["dns.example.test", "https://dns.example.test/dns-query", "[::1]x"])
    func plainOnlyParsingRefusesEveryOtherForm(text: String) {
        #expect(throws: Upstream.ParseError.notAnAddress(text)) { try Upstream.parsePlain(text) }
    }

    @Test func errorsAreSentencesNamingTheText() {
        #expect(Upstream.ParseError.notAnUpstream("x").description
                    == "'x' is not an upstream (expected IP or IP:PORT, IPv6 as [IP]:PORT, "
                    + "https://NAME[:PORT]/PATH for DNS over HTTPS or tls://NAME[:PORT] for DNS over TLS)")
        #expect(Upstream.ParseError.notAnAddress("x").description
                    == "'x' is not an IP address (expected IP or IP:PORT, IPv6 as [IP]:PORT)")
        #expect(Upstream.ParseError.encrypted(.missingPath("https://d.test")).description
                    == "'https://d.test' has no path: a DNS over HTTPS upstream needs one, such as /dns-query")
    }

    @Test func configuringAnEncryptedUpstreamAddsItsBootstrapPinsAndCA() throws {
        let pin = try UpstreamPin.parse("dns.example.test=sha256//" + String(repeating: "A", count: 43) + "=")
        let bootstrap = try UpstreamBootstrap.parse("dns.example.test=127.0.0.20")
        let other = try UpstreamBootstrap.parse("other.example.test=127.0.0.30")
        let configured = try Upstream.parse("tls://dns.example.test")
            .configured(bootstrap: [other, bootstrap], pins: [pin], extraCAFile: "/ca.pem")
        #expect(configured.encrypted?.bootstrap == [IPAddress("127.0.0.20")!])
        #expect(configured.encrypted?.pins == pin.pins)
        #expect(configured.encrypted?.extraCAFile == "/ca.pem")
        let plain = try Upstream.parse("127.0.0.1:53")
        #expect(try plain.configured(bootstrap: [bootstrap], pins: [pin], extraCAFile: "/ca.pem") == plain)
        #expect(throws: EncryptedUpstreamError.missingBootstrap("tls://dns.example.test")) {
            try Upstream.parse("tls://dns.example.test").configured(bootstrap: [other], pins: [], extraCAFile: nil)
        }
    }
}
