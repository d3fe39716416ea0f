import HostPin
import Testing

@Suite struct EncryptedUpstreamTests {
    @Test(arguments: [
        ("https://dns.example.test/dns-query", "https://dns.example.test/dns-query"),
        ("https://dns.example.test:443/dns-query", "https://dns.example.test/dns-query"),
        ("HTTPS://DNS.Example.Test:8443/dns-query", "https://dns.example.test:8443/dns-query"),
        ("https://dns.example.test./resolve/v1", "https://dns.example.test/resolve/v1"),
        ("https://127.0.0.1:8443/dns-query", "https://127.0.0.1:8443/dns-query"),
        ("https://[::1]/dns-query", "https://[::1]/dns-query"),
        ("https://[::1]:8443/dns-query", "https://[::1]:8443/dns-query"),
        ("https://bücher.example.test/dns-query", "https://xn--bcher-kva.example.test/dns-query"),
        ("tls://dns.example.test", "tls://dns.example.test"),
        ("tls://dns.example.test:853", "tls://dns.example.test"),
        ("tls://dns.example.test:8853", "tls://dns.example.test:8853"),
        ("tls://127.0.0.1", "tls://127.0.0.1"),
        ("tls://[::1]:8853", "tls://[::1]:8853"),
    ])
    func parsesAndPrintsBack(text: String, printed: String) throws {
        let upstream = try EncryptedUpstream.parse(text)
        #expect(upstream.description == printed)
        #expect(EncryptedUpstream(printed) == upstream)
    }

    @Test func partsAndDefaultPorts() throws {
        let doh = try EncryptedUpstream.parse("https://dns.example.test/dns-query")
        #expect(doh.transport == .https(path: "/dns-query"))
        #expect(doh.name.text == "dns.example.test")
        #expect(doh.port == 443)
        #expect(doh.connectAddresses.isEmpty)
        let dot = try EncryptedUpstream.parse("tls://[::1]")
        #expect(dot.transport == .tls)
        #expect(dot.port == 853)
        #expect(dot.connectAddresses == [IPAddress("::1")!])
    }

    @Test(arguments: [
        ("127.0.0.1:53", EncryptedUpstreamError.notEncrypted("127.0.0.1:53")),
        ("dns.example.test", .notEncrypted("dns.example.test")),
        ("http://dns.example.test/dns-query", .unsupportedScheme("http://dns.example.test/dns-query")),
        ("quic://dns.example.test", .unsupportedScheme("quic://dns.example.test")),
        ("https://dns.example.test", .missingPath("https://dns.example.test")),
        ("https://dns.example.test/", .missingPath("https://dns.example.test/")),
        ("https://dns.example.test:443", .missingPath("https://dns.example.test:443")),
        ("https://dns.example.test/dns-query?dns=AAAB", .badPath("https://dns.example.test/dns-query?dns=AAAB", "?")),
        ("https://dns.example.test/dns query", .badPath("https://dns.example.test/dns query", " ")),
        ("https://dns.example.test/q#x", .badPath("https://dns.example.test/q#x", "#")),
        ("tls://dns.example.test/dns-query", .unexpectedPath("tls://dns.example.test/dns-query")),
        ("tls://dns.example.test:0", .badPort("tls://dns.example.test:0")),
        ("tls://dns.example.test:65536", .badPort("tls://dns.example.test:65536")),
        ("tls://dns.example.test:", .badPort("tls://dns.example.test:")),
        ("tls://dns.example.test:+853", .badPort("tls://dns.example.test:+853")),
        ("tls://", .badName("tls://", .empty)),
        ("tls://:853", .badName("tls://:853", .empty)),
        ("tls://::1", .unbracketedIPv6("tls://::1")),
        ("tls://[::1", .badName("tls://[::1", .badAddressLiteral)),
        ("tls://[::1]x", .badName("tls://[::1]x", .badAddressLiteral)),
        ("tls://bad..name", .badName("tls://bad..name", .emptyLabel)),
        ("tls://-dns.example.test", .badName("tls://-dns.example.test", .hyphenAtLabelEdge("-dns"))),
        ("tls://user@dns.example.test", .userInfo("tls://user@dns.example.test")),
    ])
    func rejectsWithTheReason(text: String, error: EncryptedUpstreamError) {
        #expect(throws: error) { try EncryptedUpstream.parse(text) }
        #expect(EncryptedUpstream(text) == nil)
    }

    @Test func errorDescriptionsAreSentences() {
        #expect(EncryptedUpstreamError.missingPath("https://dns.example.test").description
            == "'https://dns.example.test' has no path: a DNS over HTTPS upstream needs one, such as /dns-query")
        #expect(EncryptedUpstreamError.badPath("https://d.test/a b", " ").description
            == "'https://d.test/a b' has U+0020 in its path, which may hold no query, fragment, space or control character")
        #expect(EncryptedUpstreamError.badPath("https://d.test/a?b", "?").description
            == "'https://d.test/a?b' has '?' in its path, which may hold no query, fragment, space or control character")
    }

    @Test func bootstrapEntries() throws {
        let entry = try UpstreamBootstrap.parse("DNS.example.test=127.0.0.1,[::1],::1,127.0.0.1")
        #expect(entry.name.text == "dns.example.test")
        #expect(entry.addresses == [IPAddress("127.0.0.1")!, IPAddress("::1")!])
        #expect(entry.description == "dns.example.test=127.0.0.1,::1")
    }

    @Test(arguments: [
        ("dns.example.test", EncryptedUpstreamError.missingName("dns.example.test")),
        ("=127.0.0.1", .missingName("=127.0.0.1")),
        ("dns.example.test=", .badBootstrapAddress("dns.example.test=", "")),
        ("dns.example.test=127.0.0.1,", .badBootstrapAddress("dns.example.test=127.0.0.1,", "")),
        ("dns.example.test=dns2.example.test", .badBootstrapAddress("dns.example.test=dns2.example.test", "dns2.example.test")),
        ("dns.example.test=127.0.0.1:853", .badBootstrapAddress("dns.example.test=127.0.0.1:853", "127.0.0.1:853")),
        ("127.0.0.1=127.0.0.1", .addressAsName("127.0.0.1=127.0.0.1")),
        ("bad..name=127.0.0.1", .badName("bad..name=127.0.0.1", .emptyLabel)),
    ])
    func rejectsBadBootstrapEntries(text: String, error: EncryptedUpstreamError) {
        #expect(throws: error) { try UpstreamBootstrap.parse(text) }
    }

    static let pinA = "sha256//" + String(repeating: "A", count: 43) + "="
    static let pinB = "sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="

    @Test func pinEntries() throws {
        let entry = try UpstreamPin.parse("dns.example.test=\(Self.pinB);\(Self.pinA);\(Self.pinB)")
        #expect(entry.name.text == "dns.example.test")
        #expect(entry.pins.map(\.description) == [Self.pinB, Self.pinA])
        #expect(try UpstreamPin.parse("127.0.0.1=\(Self.pinA)").name.literalAddress == IPAddress("127.0.0.1"))
    }

    @Test(arguments: [
        "dns.example.test=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",   // no sha256//
        "dns.example.test=sha1//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
        "dns.example.test=sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuF",  // not base64
        "dns.example.test=sha256//AAAA",   // 3 octets, not 32
        "dns.example.test=sha256//" + String(repeating: "A", count: 44),   // 33 octets
        "dns.example.test=",
    ])
    func rejectsBadPins(text: String) {
        let value = String(text[text.index(after: text.firstIndex(of: "=")!)...])
        #expect(throws: EncryptedUpstreamError.badPin(value)) { try UpstreamPin.parse(text) }
        #expect(PublicKeyPin(value) == nil)
    }

    @Test func configuredTakesTheEntriesForItsNameOnly() throws {
        let upstream = try EncryptedUpstream.parse("tls://dns.example.test:8853")
        let configured = try upstream.configured(
            bootstrap: [try UpstreamBootstrap.parse("other.example.test=127.0.0.9"),
                        try UpstreamBootstrap.parse("dns.example.test=127.0.0.1"),
                        try UpstreamBootstrap.parse("dns.example.test=::1,127.0.0.1")],
            pins: [try UpstreamPin.parse("dns.example.test=\(Self.pinA)"), try UpstreamPin.parse("other.example.test=\(Self.pinB)")],
            extraCAFile: "/tmp/ca.pem")
        #expect(configured.bootstrap == [IPAddress("127.0.0.1")!, IPAddress("::1")!])
        #expect(configured.pins.map(\.description) == [Self.pinA])
        #expect(configured.extraCAFile == "/tmp/ca.pem")
        #expect(configured.description == "tls://dns.example.test:8853")
    }

    @Test func configuredNeedsABootstrapForAHostName() throws {
        let upstream = try EncryptedUpstream.parse("https://dns.example.test/dns-query")
        #expect(throws: EncryptedUpstreamError.missingBootstrap("https://dns.example.test/dns-query")) {
            try upstream.configured(bootstrap: [try UpstreamBootstrap.parse("other.example.test=127.0.0.9")], pins: [], extraCAFile: nil)
        }
        let literal = try EncryptedUpstream.parse("https://127.0.0.1/dns-query")
        #expect(try literal.configured(bootstrap: [], pins: [], extraCAFile: nil).connectAddresses == [IPAddress("127.0.0.1")!])
    }
}
