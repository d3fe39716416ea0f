import Foundation
import HostPin
import Testing

@Suite struct HostNameTests {
    @Test(arguments: [
        ("WWW.Example.TEST", "www.example.test"),
        ("www.example.test.", "www.example.test"),
        ("bücher.example.test", "xn--bcher-kva.example.test"),
        ("BÜCHER.example.test", "xn--bcher-kva.example.test"),
        ("xn--bcher-kva.example.test", "xn--bcher-kva.example.test"),
        ("straße.example.test", "xn--strae-oqa.example.test"),
        ("_service.example.test", "_service.example.test"),
        ("www.example.test\u{3002}", "www.example.test"),
        ("www\u{3002}example\u{3002}test", "www.example.test"),
        (String(repeating: "a", count: 63) + ".test", String(repeating: "a", count: 63) + ".test"),
    ])
    func normalisesToLowerCaseALabelsWithoutTrailingDot(input: String, expected: String) throws {
        let name = try HostName.parse(input)
        #expect(name.text == expected)
        #expect(name.literalAddress == nil)
    }

    @Test(arguments: [
        ("127.0.0.1", "127.0.0.1", IPAddress.Family.v4),
        ("::1", "::1", .v6),
        ("[::1]", "::1", .v6),
        ("[2001:DB8:0:0::1]", "2001:db8::1", .v6),
        ("10.0.0.1.", "10.0.0.1", .v4),
    ])
    func keepsIPLiteralsAsAddresses(input: String, text: String, family: IPAddress.Family) throws {
        let name = try HostName.parse(input)
        #expect(name.text == text)
        #expect(name.literalAddress?.family == family)
    }

    @Test(arguments: [
        ("", HostNameProblem.empty),
        (".", .empty),
        ("a..b", .emptyLabel),
        (".example.test", .emptyLabel),
        ("www.example.test..", .emptyLabel),
        ("has space.test", .invalidCharacter(" ")),
        ("tab\tname.test", .invalidCharacter("\t")),
        ("nul\u{0}.test", .invalidCharacter("\u{0}")),
        ("bad$char.test", .invalidCharacter("$")),
        (String(repeating: "a", count: 64) + ".test", .labelTooLong(String(repeating: "a", count: 64))),
        ("-json", .hyphenAtLabelEdge("-json")),
        ("www-.example.test", .hyphenAtLabelEdge("www-")),
        ("[127.0.0.1]", .badAddressLiteral),
        ("127.0.0.1\u{0}.evil.example", .invalidCharacter("\u{0}")),
        ("::1\u{0}x", .invalidCharacter("\u{0}")),
        ("010.0.0.1", .numericTopLabel("1")),
        ("0127.0.0.1", .numericTopLabel("1")),
        ("www.example.0x7f", .numericTopLabel("0x7f")),
        ("[::1", .badAddressLiteral),
    ])
    func rejectsInvalidNamesWithTheReason(input: String, problem: HostNameProblem) {
        #expect(throws: ResolutionError.badName(input, problem)) { try HostName.parse(input) }
    }

    @Test func rejectsNamesLongerThan253Octets() {
        let label = String(repeating: "a", count: 63)
        let name = [label, label, label, label].joined(separator: ".")  // 255 octets
        #expect(throws: ResolutionError.badName(name, .nameTooLong(octets: 255))) { try HostName.parse(name) }
        let fits = [label, label, label, String(repeating: "b", count: 61)].joined(separator: ".")  // 253
        #expect((try? HostName.parse(fits))?.text == fits)
    }

    @Test func rejectsNamesIDNARefuses() throws {
        // U+2488 DIGIT ONE FULL STOP is disallowed by UTS #46.
        let error = #expect(throws: ResolutionError.self) { try HostName.parse("a\u{2488}b.test") }
        guard case .badName(_, .idna)? = error else {
            Issue.record("expected an IDNA problem, got \(String(describing: error))")
            return
        }
    }

    @Test func errorMessageNamesTheInputAndTheReason() {
        let error = ResolutionError.badName("a..b", .emptyLabel)
        #expect(error.description == "'a..b' is not a valid host name: it has an empty label (two dots in a row, or a leading dot)")
    }

    @Test func recognisesLocalhostNames() throws {
        #expect(try HostName.parse("localhost").isLocalhost)
        #expect(try HostName.parse("LocalHost.").isLocalhost)
        #expect(try HostName.parse("app.localhost").isLocalhost)
        #expect(try !HostName.parse("localhost.example.test").isLocalhost)
    }

    /// Every non-ASCII rule of the Public Suffix List, with the A-label two IDNA implementations agree on.
    @Test func reproducesEveryPublicSuffixListALabel() throws {
        let url = try #require(Bundle.module.url(forResource: "idn-psl", withExtension: "tsv", subdirectory: "Fixtures"))
        let rows = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("#") }
            .map { $0.split(separator: "\t").map(String.init) }
        #expect(rows.count == 459)
        var mismatches: [String] = []
        for row in rows {
            let normalised = try? HostName.parse(row[0]).text
            if normalised != row[1] { mismatches.append("\(row[0]) → \(normalised ?? "error"), expected \(row[1])") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) rows differ: \(mismatches.prefix(5))")
    }
}
