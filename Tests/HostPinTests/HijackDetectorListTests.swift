import Foundation
import HostPin
import HostPinTestSupport
import Testing

/// The detector's settings as text: ``IPAddressRange`` (`--ordinary`, list entries) and the known-hijack
/// list's own format, whose parser gives typed problems with line numbers and never traps on any input.
@Suite struct HijackDetectorListTests {
    // MARK: ranges

    @Test(arguments: [
        ("10.0.0.0/8", "10.0.0.0/8"),
        ("127.0.0.66", "127.0.0.66"),
        ("127.0.0.66/32", "127.0.0.66"),
        ("0.0.0.0/0", "0.0.0.0/0"),
        ("2001:DB8::/32", "2001:db8::/32"),
        ("::1", "::1"),
        ("::/0", "::/0"),
    ])
    func rangeParsesAndPrintsCanonically(text: String, printed: String) throws {
        #expect(try IPAddressRange.parse(text).description == printed)
    }

    @Test(arguments: [
        ("", IPAddressRange.ParseError.badAddress("")),
        ("example.test", .badAddress("example.test")),
        ("10.0.0/8", .badAddress("10.0.0/8")),
        ("/8", .badAddress("/8")),
        ("10.0.0.0/", .badPrefixLength("10.0.0.0/", maximum: 32)),
        ("10.0.0.0/33", .badPrefixLength("10.0.0.0/33", maximum: 32)),
        ("10.0.0.0/-1", .badPrefixLength("10.0.0.0/-1", maximum: 32)),
        ("10.0.0.0/8/8", .badPrefixLength("10.0.0.0/8/8", maximum: 32)),
        ("10.0.0.0/٨", .badPrefixLength("10.0.0.0/٨", maximum: 32)),
        ("::/129", .badPrefixLength("::/129", maximum: 128)),
        ("10.0.0.1/8", .hostBitsSet("10.0.0.1/8", network: "10.0.0.0/8")),
        ("2001:db8::1/32", .hostBitsSet("2001:db8::1/32", network: "2001:db8::/32")),
    ])
    func badRangeSaysWhy(text: String, error: IPAddressRange.ParseError) {
        #expect(throws: error) { try IPAddressRange.parse(text) }
        #expect(IPAddressRange(text) == nil)
    }

    @Test func rangeHoldsItsAddressesOfItsFamilyOnly() throws {
        let v4 = try IPAddressRange.parse("100.64.0.0/10")
        #expect(v4.contains(IPAddress("100.64.0.0")!))
        #expect(v4.contains(IPAddress("100.127.255.255")!))
        #expect(!v4.contains(IPAddress("100.128.0.0")!))
        #expect(!v4.contains(IPAddress("::ffff:100.64.0.1")!))
        let v6 = try IPAddressRange.parse("fe80::/10")
        #expect(v6.contains(IPAddress("febf::1")!))
        #expect(!v6.contains(IPAddress("fec0::1")!))
        #expect(try IPAddressRange.parse("0.0.0.0/0").contains(IPAddress("203.0.113.9")!))
        #expect(!(try IPAddressRange.parse("0.0.0.0/0").contains(IPAddress("::1")!)))
        #expect(try IPAddressRange.parse("127.0.0.66").contains(IPAddress("127.0.0.66")!))
        #expect(!(try IPAddressRange.parse("127.0.0.66").contains(IPAddress("127.0.0.67")!)))
    }

    // MARK: the list

    @Test func shippedExampleParses() throws {
        let path = Lab.repositoryRoot.appendingPathComponent("examples/hijack-list.txt").path
        let list = try HijackList(contentsOf: path)
        #expect(list.entries.map(\.range.description) == ["127.0.0.66", "192.0.2.0/24", "2001:db8:66::/48"])
        #expect(list.entry(containing: IPAddress("127.0.0.66")!)?.comment == "lab hijacker's page")
        #expect(list.entry(containing: IPAddress("2001:db8:66:1::5")!)?.description
                    == "2001:db8:66::/48 (line 16: example: the same ISP over IPv6)")
        #expect(list.entry(containing: IPAddress("127.0.0.10")!) == nil)
    }

    @Test func entriesKeepRangeCommentAndLine() throws {
        let text = "# known\r\n\r\n  10.0.0.0/8\t# a portal # with a hash\r\n\n::1 #loopback\n# end"
        let list = try HijackList(parsing: Array(text.utf8), source: "list")
        #expect(list.entries == [
            HijackList.Entry(range: IPAddressRange("10.0.0.0/8")!, comment: "a portal # with a hash", line: 3),
            HijackList.Entry(range: IPAddressRange("::1")!, comment: "loopback", line: 5),
        ])
        #expect(list.entries[0].description == "10.0.0.0/8 (line 3: a portal # with a hash)")
        #expect(try HijackList(parsing: [UInt8](), source: "empty").entries == [])
    }

    @Test func everyBadLineIsListedWithItsNumber() {
        let text = """
            10.0.0.1/8   # typo
            127.0.0.66
            www.example.test # a name
            1.2.3.4 5.6.7.8 # two
            ::1/200 # too long a prefix
            # fine
            192.0.2.1 # fine
            """
        let expected = HijackListError.invalid(source: "list.txt", problems: [
            HijackListProblem(line: 1, .badRange(.hostBitsSet("10.0.0.1/8", network: "10.0.0.0/8"))),
            HijackListProblem(line: 2, .missingComment("127.0.0.66")),
            HijackListProblem(line: 3, .badRange(.badAddress("www.example.test"))),
            HijackListProblem(line: 4, .extraText("5.6.7.8")),
            HijackListProblem(line: 5, .badRange(.badPrefixLength("::1/200", maximum: 128))),
        ])
        #expect(throws: expected) { try HijackList(parsing: Array(text.utf8), source: "list.txt") }
        #expect(expected.description == "list.txt has 5 errors: "
            + "line 1: '10.0.0.1/8' has bits set after its prefix length (did you mean 10.0.0.0/8?); "
            + "line 2: 127.0.0.66 has no comment: write '# ' and what it is after it; "
            + "line 3: 'www.example.test' is not an IP address or CIDR range; "
            + "line 4: unexpected '5.6.7.8' after the address: a comment starts with '#'; "
            + "line 5: '::1/200' has a prefix length that is not a whole number from 0 to 128")
    }

    @Test func manyProblemsAreCountedAfterTheFirstTen() {
        let text = (1...25).map { "bad\($0) # x" }.joined(separator: "\n")
        do throws(HijackListError) {
            _ = try HijackList(parsing: Array(text.utf8), source: "list")
            Issue.record("parsed")
        } catch {
            guard case .invalid(_, let problems) = error else { Issue.record("\(error)"); return }
            #expect(problems.map(\.line) == Array(1...25))
            #expect(error.description.hasPrefix("list has 25 errors: line 1: 'bad1' is not an IP address or CIDR range; "))
            #expect(error.description.hasSuffix("line 10: 'bad10' is not an IP address or CIDR range; and 15 more"))
        }
    }

    @Test func bytesThatAreNotTextAreProblemsNotCrashes() {
        var bytes = Array("10.0.0.0/8 # ok\n".utf8)
        bytes += [0xFF, 0xFE, 0x0A]                                     // line 2: not UTF-8
        bytes += Array("127.0.0.1\u{0}evil # nul\n".utf8)               // line 3: an embedded NUL
        bytes += Array(repeating: UInt8(ascii: "1"), count: 5000) + [0x0A]  // line 4: too long
        #expect(throws: HijackListError.invalid(source: "bin", problems: [
            HijackListProblem(line: 2, .notUTF8),
            HijackListProblem(line: 3, .badRange(.badAddress("127.0.0.1\u{0}evil"))),
            HijackListProblem(line: 4, .lineTooLong),
        ])) { try HijackList(parsing: bytes, source: "bin") }
    }

    /// Random bytes and random mixes of list syntax: every input ends in a list or a typed error.
    @Test func randomInputNeverTraps() {
        var generator = SeededGenerator(seed: 17)
        let pieces = ["10.0.0.0", "/", "8", "/33", "#", " ", "\t", "\r", "\n", "::", "ffff", ".", "1", "x", "é", "\u{0}"]
        for round in 0..<2_000 {
            let bytes: [UInt8]
            if round.isMultiple(of: 2) {
                bytes = (0..<Int.random(in: 0..<200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            } else {
                bytes = Array((0..<Int.random(in: 0..<40, using: &generator))
                    .map { _ in pieces[Int.random(in: 0..<pieces.count, using: &generator)] }.joined().utf8)
            }
            do throws(HijackListError) {
                let list = try HijackList(parsing: bytes, source: "random")
                #expect(list.entries.allSatisfy { !$0.comment.isEmpty })
            } catch {
                guard case .invalid(_, let problems) = error else { Issue.record("\(error)"); return }
                #expect(!problems.isEmpty)
            }
        }
    }

    @Test func unusableFileIsAFileProblem() throws {
        #expect(throws: HijackListError.file(path: "/nonexistent/list", .missing)) {
            try HijackList(contentsOf: "/nonexistent/list")
        }
        #expect(throws: HijackListError.file(path: "/tmp", .notARegularFile)) { try HijackList(contentsOf: "/tmp") }
        let large = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-list-\(UUID()).txt").path
        _ = FileManager.default.createFile(atPath: large, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: large) }
        let handle = try #require(FileHandle(forWritingAtPath: large))
        try handle.truncate(atOffset: UInt64(HijackList.fileLimit + 1))
        try handle.close()
        #expect(throws: HijackListError.file(path: large, .tooLarge(limit: HijackList.fileLimit))) {
            try HijackList(contentsOf: large)
        }
    }
}

/// A small deterministic generator (SplitMix64), so a failing random input can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
