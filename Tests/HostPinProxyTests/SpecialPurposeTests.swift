import HostPin
import HostPinProxy
import Testing

/// RFC 6890 special-purpose blocks and the rebinding guard: what the proxy refuses without allowPrivate.
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

    /// A name with ordinary and special-purpose addresses goes to the ordinary ones; one with only
    /// special-purpose addresses is refused, naming the first.
    @Test func rebindingGuardKeepsOrdinaryAddressesAndRefusesTheRest() throws {
        let name = try HostName.parse("www.example.test")
        let mixed = try ["10.0.0.1", "1.1.1.1", "::1", "2606:4700::1111"].map { try #require(IPAddress($0)) }
        #expect(try RebindingGuard.admitted(mixed, for: name).map(\.description) == ["1.1.1.1", "2606:4700::1111"])
        let special = try ["127.0.0.10", "fe80::1"].map { try #require(IPAddress($0)) }
        let refusal = #expect(throws: RebindingRefusal.self) { try RebindingGuard.admitted(special, for: name) }
        #expect(refusal?.description == "www.example.test resolves to 127.0.0.10, in special-purpose block 127.0.0.0/8 "
            + "(loopback, RFC 1122); private targets are not allowed.")
    }

    @Test(arguments: [("127.0.0.1:8118", true), ("[::1]:0", true), ("::1:80", false), ("127.0.0.1", false),
                      ("127.0.0.1:65536", false), ("host:80", false), ("[::1]80", false)])
    func socketAddressParses(text: String, valid: Bool) {
        #expect((SocketAddress(text) != nil) == valid)
        if valid { #expect(SocketAddress(text)?.description == text) }
    }
}
