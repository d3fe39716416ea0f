import HostPin
import HostPinProxy
import Testing

/// RFC 6890 special-purpose blocks: what the proxy refuses without allowPrivate.
@Suite struct SpecialPurposeTests {
    @Test(arguments: [
        ("127.0.0.10", "loopback"), ("10.1.2.3", "private use"), ("172.31.255.255", "private use"),
        ("192.168.1.1", "private use"), ("169.254.169.254", "link-local"), ("100.64.0.1", "shared address space"),
        ("0.0.0.0", "this network"), ("224.0.0.1", "multicast"), ("255.255.255.255", "limited broadcast"),
        ("198.18.0.1", "benchmarking"), ("::1", "loopback"), ("::", "unspecified"), ("fe80::1", "link-local"),
        ("fd00::1", "unique local"), ("ff02::1", "multicast"), ("2001:db8::1", "documentation"),
        ("::ffff:127.0.0.1", "loopback"), ("::ffff:192.168.0.1", "private use"), ("64:ff9b::a00:1", "private use"),
    ])
    func specialPurposeAddressesAreNamed(text: String, name: String) throws {
        let address = try #require(IPAddress(text))
        #expect(address.specialPurposeBlock?.name == name)
        #expect(address.isSpecialPurpose)
    }

    @Test(arguments: ["1.1.1.1", "8.8.8.8", "172.32.0.1", "192.169.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "2a00:1450::1"])
    func globalAddressesAreNotSpecial(text: String) throws {
        #expect(try #require(IPAddress(text)).specialPurposeBlock == nil)
    }

    @Test(arguments: [("127.0.0.1:8118", true), ("[::1]:0", true), ("::1:80", false), ("127.0.0.1", false),
                      ("127.0.0.1:65536", false), ("host:80", false), ("[::1]80", false)])
    func socketAddressParses(text: String, valid: Bool) {
        #expect((SocketAddress(text) != nil) == valid)
        if valid { #expect(SocketAddress(text)?.description == text) }
    }
}
