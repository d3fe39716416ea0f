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
    ])
    func parsesAndPrintsBack(text: String, printed: String) throws {
        #expect(try Upstream.parse(text).description == printed)
        #expect(Upstream(text)?.description == printed)
    }

    @Test(arguments: [
        ("dns.example.test", Upstream.ParseError.notAnAddress("dns.example.test")),
        ("dns.example.test:53", .notAnAddress("dns.example.test:53")),
        ("127.0.0.1:0", .badPort("127.0.0.1:0")),
        ("127.0.0.1:65536", .badPort("127.0.0.1:65536")),
        ("127.0.0.1:", .badPort("127.0.0.1:")),
        ("127.0.0.1:+53", .badPort("127.0.0.1:+53")),
        ("[::1]x", .notAnAddress("[::1]x")),
        ("[127.0.0.1]:53", .notAnAddress("[127.0.0.1]:53")),
        ("127.0.0.1\u{0}junk", .notAnAddress("127.0.0.1\u{0}junk")),
        ("", .notAnAddress("")),
    ])
    func rejectsWhatIsNotAnAddressAndPort(text: String, error: Upstream.ParseError) {
        #expect(throws: error) { try Upstream.parse(text) }
        #expect(Upstream(text) == nil)
    }
}
