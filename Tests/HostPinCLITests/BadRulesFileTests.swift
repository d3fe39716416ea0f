import Foundation
import HostPinTestSupport
import Testing

/// Every bad rules file issue 14 lists, given to `hostpin fetch --rules` and `hostpin proxy --rules`:
/// each refused before anything starts, exit 2, the reason on stderr, and no crash or hang (the
/// library's own checks, key path by key path, are `RulesLoadingTests`).
@Suite struct BadRulesFileTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// One bad file: how to make it in a scratch folder (returning the path to pass), and what stderr says.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let make: @Sendable (String) throws -> String
        let reason: String
        var testDescription: String { name }
    }

    static func rules(_ json: String, files: [String: Data] = [:]) -> @Sendable (String) throws -> String {
        { folder in
            for (name, data) in files { try data.write(to: URL(fileURLWithPath: folder + "/" + name)) }
            try Data(json.utf8).write(to: URL(fileURLWithPath: folder + "/rules.json"))
            return folder + "/rules.json"
        }
    }

    static let cases: [Case] = [
        Case(name: "empty", make: rules(""), reason: "is empty: a rules file is a JSON object {\"rules\": [...]}"),
        Case(name: "not JSON", make: rules("{\"rules\": [}"), reason: "is not JSON"),
        Case(name: "wrong shape", make: rules("[]"), reason: "(top level): must be an object {\"rules\": [...]}, not an array"),
        Case(name: "100 MB", make: { folder in
            let path = folder + "/rules.json"
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.truncate(atOffset: 100_000_000)  // sparse: no disk, and refused unread
            try handle.close()
            return path
        }, reason: "it is larger than 10 MiB (10485760 bytes)"),
        Case(name: "the rules file is a directory", make: { folder in folder }, reason: "it is not a regular file"),
        Case(name: "respond file is a directory", make: { folder in
            try FileManager.default.createDirectory(atPath: folder + "/logo.png", withIntermediateDirectories: true)
            return try rules("{\"rules\": [{\"action\": \"respond\", \"url\": \"http://www.example.test/logo.png\", \"file\": \"logo.png\"}]}")(folder)
        }, reason: "rules[0].file: cannot use file"),
        // Root reads any file whatever its mode: a symbolic link loop is what cannot be read here.
        Case(name: "respond file unreadable", make: { folder in
            try FileManager.default.createSymbolicLink(atPath: folder + "/loop.png", withDestinationPath: folder + "/loop.png")
            return try rules("{\"rules\": [{\"action\": \"respond\", \"url\": \"http://www.example.test/logo.png\", \"file\": \"loop.png\"}]}")(folder)
        }, reason: "it cannot be read (Too many levels of symbolic links)"),
        Case(name: "invalid IDNA", make: rules("{\"rules\": [{\"action\": \"block\", \"host\": \"a\\u2488b.example.test\"}]}"),
             reason: "is not a valid internationalised name"),
        Case(name: "port out of range", make: rules("{\"rules\": [{\"action\": \"block\", \"url\": \"http://www.example.test:70000/\"}]}"),
             reason: "has a port out of range (1-65535)"),
        Case(name: "redirect loop between two rules", make: rules("""
            {"rules": [{"action": "redirect", "urlPrefix": "http://a.example.test/", "to": "http://b.example.test/"},
                       {"action": "redirect", "host": "b.example.test", "to": "a.example.test", "status": 302}]}
            """), reason: "redirect loop: rules[0] → rules[1] → rules[0]"),
    ]

    @Test(arguments: cases)
    func fetchRefusesItBeforeAnyRequest(_ bad: Case) async throws {
        try await Scratch.with { folder in
            let path = try bad.make(folder)
            let result = try await HostPinBinary.run(["fetch", "--rules", path, "http://www.example.test:\(lab.httpPort)/whoami",
                                                      "--server", "\(lab.trustedDNS)", "--timeout", "2"])
            #expect(result.status == 2, "\(result.standardError)")
            #expect(result.standardOutput == "")
            #expect(result.standardError.hasPrefix("hostpin: error: "), "\(result.standardError)")
            #expect(result.standardError.contains(bad.reason), "\(result.standardError)")
        }
    }

    @Test(arguments: cases)
    func proxyRefusesToStart(_ bad: Case) async throws {
        try await Scratch.with { folder in
            let path = try bad.make(folder)
            let result = try await HostPinBinary.run(["proxy", "--listen", "127.0.0.1:0", "--server", "\(lab.trustedDNS)",
                                                      "--rules", path])
            #expect(result.status == 2, "\(result.standardError)")
            #expect(result.standardOutput == "")
            #expect(result.standardError.hasPrefix("hostpin: error: "), "\(result.standardError)")
            #expect(result.standardError.contains(bad.reason), "\(result.standardError)")
        }
    }
}
