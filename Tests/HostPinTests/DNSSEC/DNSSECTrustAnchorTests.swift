import Foundation
import HostPin
import Testing

@Suite struct DNSSECTrustAnchorTests {
    private func file(_ contents: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("anchor-\(UUID().uuidString)").path
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func builtInAnchorsAreTheIANARootKSKs() throws {
        let name = try #require(WireName("www.example.com"))
        let root = try #require(TrustAnchors.ianaRoot.closest(to: name))
        #expect(root.zone == .root)
        #expect(root.ds.compactMap { DSData($0.rdata) }.map(\.keyTag).sorted() == [20326, 38696])
        #expect(root.ds.compactMap { DSData($0.rdata) }.allSatisfy { $0.algorithm == 8 && $0.digestType == 2 && $0.digest.count == 32 })
    }

    /// Debian's dns-root-data file, when installed, holds the same two records as the built-in anchors.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/share/dns/root.ds")))
    func debianRootDSFileEqualsTheBuiltInAnchors() throws {
        #expect(try TrustAnchors.load(path: "/usr/share/dns/root.ds") == TrustAnchors.ianaRoot)
    }

    @Test func fileWithCommentsBlankLinesDSAndDNSKEYLinesIsRead() throws {
        let path = try file("""
        ; the lab's anchors
        
        example.test. IN DS 12345 13 2 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF
        test. 3600 IN DNSKEY 257 3 13 kXKkvWU3vGYfTJGl3qBd4qhiWp5aRs7YtkCJxD2d+t7KXqwahww5IgJtxJT2yFItlggazyfXqJEVOmMJ3qT0tQ==
        example.test. IN SOA ns.example.test. admin.example.test. 1 3600 600 86400 60
        """)
        let anchors = try TrustAnchors.load(path: path)
        #expect(anchors.closest(to: try #require(WireName("www.example.test")))?.ds.count == 1)
        #expect(anchors.closest(to: try #require(WireName("www.test")))?.dnskeys.count == 1)
        #expect(anchors.closest(to: try #require(WireName("example.org"))) == nil)
    }

    @Test func emptyFileIsRefused() throws {
        let path = try file("; only a comment\n\n")
        #expect(throws: TrustAnchorError.empty(path: path)) { try TrustAnchors.load(path: path) }
    }

    @Test func fileWithoutDSOrDNSKEYIsRefused() throws {
        let path = try file("example.test. IN A 127.0.0.1\n")
        #expect(throws: TrustAnchorError.noAnchorRecord(path: path)) { try TrustAnchors.load(path: path) }
    }

    /// Seen failing first: a file of digest type 99 loaded, and `lookup --trust-anchor` printed `; insecure`.
    @Test func anchorWithoutASupportedAlgorithmOrDigestIsRefused() throws {
        let digest = "E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D"
        let badDigest = try file(". IN DS 20326 8 99 \(digest)\n")
        #expect(throws: TrustAnchorError.noSupportedAnchor(path: badDigest, zone: ".")) { try TrustAnchors.load(path: badDigest) }
        let badAlgorithm = try file("example.test. IN DS 20326 99 2 \(digest)\n. IN DS 20326 8 2 \(digest)\n")
        #expect(throws: TrustAnchorError.noSupportedAnchor(path: badAlgorithm, zone: "example.test.")) { try TrustAnchors.load(path: badAlgorithm) }
        let oneGood = try file(". IN DS 20326 8 99 \(digest)\n. IN DS 20326 8 2 \(digest)\n")
        #expect(try TrustAnchors.load(path: oneGood).closest(to: .root)?.ds.count == 2)
    }

    /// ldns keeps an octet field's low bits: `DS 21532 269 2` was read as algorithm 13, `65536` as key tag 0.
    @Test func aNumberTooLargeForItsFieldIsRefused() throws {
        let digest = "E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D"
        for (line, field, value, maximum) in [(". IN DS 21532 269 2 \(digest)", "algorithm", "269", 255),
                                              (". 3600 IN DS 20326 8 258 \(digest)", "digest type", "258", 255),
                                              (". IN DNSKEY 257 3 269 AwEAAag=", "algorithm", "269", 255),
                                              (". IN DNSKEY 257 259 13 AwEAAag=", "protocol", "259", 255)] {
            let path = try file("; header\n\(line)\n")
            #expect(throws: TrustAnchorError.fieldOutOfRange(path: path, line: 2, field: field, value: value, maximum: maximum), "\(line)") {
                try TrustAnchors.load(path: path)
            }
        }
        let mnemonic = try file(". IN DS 20326 ECDSAP256SHA256 2 \(digest)\n")
        #expect(try TrustAnchors.load(path: mnemonic).closest(to: .root)?.ds.count == 1)
        #expect(TrustAnchorError.fieldOutOfRange(path: "f", line: 2, field: "algorithm", value: "269", maximum: 255).description
                == "trust anchor file f, line 2: the algorithm 269 is not a number from 0 to 255")
    }

    @Test func badLineIsNamedByItsNumber() throws {
        let path = try file("; header\n. IN DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D\nnot a record at all\n")
        #expect(throws: TrustAnchorError.badLine(path: path, line: 3, text: "not a record at all")) { try TrustAnchors.load(path: path) }
    }

    @Test func directoryIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.path
        #expect(throws: TrustAnchorError.unreadable(path: path, .notARegularFile)) { try TrustAnchors.load(path: path) }
    }

    @Test func missingFileIsRefused() throws {
        let path = "/nonexistent/anchor.ds"
        #expect(throws: TrustAnchorError.unreadable(path: path, .missing)) { try TrustAnchors.load(path: path) }
    }

    @Test func labTrustAnchorIsTheRootDS() throws {
        let (_, anchors) = try LabZones.current()
        let root = try #require(anchors.closest(to: .root))
        #expect(root.ds.count == 1 && root.dnskeys.isEmpty)
    }
}
