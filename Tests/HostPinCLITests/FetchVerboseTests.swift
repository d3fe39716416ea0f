import Foundation
import HostPinTestSupport
import Testing

/// `hostpin fetch -v`: the interceptor's event on standard error, curl `-v` style (lines starting with
/// `* `), for a plain, a redirected, a rule-answered and a failed request.
@Suite struct FetchVerboseTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    private var port: UInt16 { lab.httpPort }

    /// Runs `hostpin fetch -v arguments… --server <trusted>`; standard error's lines with every
    /// `<digits> ms` read as `N ms`.
    private func fetch(_ arguments: [String]) async throws -> (result: ProcessRunner.Result, lines: [String]) {
        let result = try await HostPinBinary.run(["fetch", "-v"] + arguments + ["--server", "\(lab.trustedDNS)", "--timeout", "2"])
        let lines = result.standardError.split(separator: "\n").map {
            $0.replacingOccurrences(of: "[0-9]+ ms", with: "N ms", options: .regularExpression)
        }
        return (result, lines)
    }

    @Test func plainRequestShowsAddressesAttemptAndConnection() async throws {
        let (result, lines) = try await fetch(["http://www.example.test:\(port)/whoami"])
        #expect(result.status == 0)
        #expect(result.standardOutput == "origin=www host=www.example.test:\(port)\n")
        #expect(lines == [
            "* URL: http://www.example.test:\(port)/whoami",
            "* www.example.test: 127.0.0.10 (upstream)",
            "*   Trying 127.0.0.10:\(port)... (at N ms)",
            "* Connected to www.example.test (127.0.0.10) port \(port) via libcurl",
            "* Response: 200",
            "* Done: 200, 39 bytes in N ms",
        ].map { $0.replacingOccurrences(of: "39", with: "\(result.standardOutput.utf8.count)") })
    }

    @Test func redirectedRequestShowsEachHop() async throws {
        let target = "http://cdn.example.test:\(port)/whoami"
        let (result, lines) = try await fetch(["-L", "http://www.example.test:\(port)/redirect/307?to=\(target)"])
        #expect(result.status == 0)
        #expect(lines == [
            "* URL: http://www.example.test:\(port)/redirect/307?to=\(target)",
            "* www.example.test: 127.0.0.10 (upstream)",
            "*   Trying 127.0.0.10:\(port)... (at N ms)",
            "* Connected to www.example.test (127.0.0.10) port \(port) via libcurl",
            "* Response: 307",
            "* Redirected to \(target)",
            "* cdn.example.test: 127.0.0.11 (upstream)",
            "*   Trying 127.0.0.11:\(port)... (at N ms)",
            "* Connected to cdn.example.test (127.0.0.11) port \(port) via libcurl",
            "* Response: 200",
            "* Done: 200, \(result.standardOutput.utf8.count) bytes in N ms",
        ])
    }

    /// A pin rule puts the sinkhole 127.0.0.66 (its certificate names hijacker.invalid) first: the handshake
    /// fails the check for www.example.test, and the same request moves on to 127.0.0.10.
    @Test func sinkholeMetFirstIsShownAndPassedOver() async throws {
        try await Scratch.with { folder in
            let https = lab.httpsPort
            let rules = #"{"rules": [{"action": "pin", "host": "www.example.test", "addresses": ["127.0.0.66", "127.0.0.10"]}]}"#
            try Data(rules.utf8).write(to: URL(fileURLWithPath: folder + "/rules.json"))
            let (result, lines) = try await fetch(["--rules", folder + "/rules.json", "--ca-file", lab.caFile,
                                                   "https://www.example.test:\(https)/whoami"])
            #expect(result.status == 0)
            #expect(result.standardOutput == "origin=www host=www.example.test:\(https)\n")
            #expect(lines == [
                "* URL: https://www.example.test:\(https)/whoami",
                "* Rules: rules[0] (pin host www.example.test)",
                "* www.example.test: 127.0.0.66, 127.0.0.10 (pinned)",
                "*   Trying 127.0.0.66:\(https)... (at N ms)",
                "*   Trying 127.0.0.10:\(https)... (at N ms)",
                "* 127.0.0.66: certificate not valid for www.example.test, a likely sinkhole: excluded, next address",
                "* Connected to www.example.test (127.0.0.10) port \(https) via libcurl",
                "* Response: 200",
                "* Done: 200, \(result.standardOutput.utf8.count) bytes in N ms",
            ])
        }
    }

    @Test func ruleAnsweredRequestShowsTheRuleAndNoNetwork() async throws {
        try await Scratch.with { folder in
            let url = "http://www.example.test:\(port)/logo.png"
            let rules = #"{"rules": [{"action": "respond", "url": "\#(url)", "body": "local\n"}]}"#
            try Data(rules.utf8).write(to: URL(fileURLWithPath: folder + "/rules.json"))
            let (result, lines) = try await fetch(["--rules", folder + "/rules.json", url])
            #expect(result.status == 0)
            #expect(result.standardOutput == "local\n")
            #expect(lines == [
                "* URL: \(url)",
                "* Rules: rules[0] (respond url \(url))",
                "* Answered locally, without the network",
                "* Response: 200",
                "* Done: 200, 6 bytes in N ms",
            ])
        }
    }

    @Test func failedRequestShowsTheErrorBeforeTheExitSentence() async throws {
        let (result, lines) = try await fetch(["http://nx.example.test:\(port)/"])
        #expect(result.status == 6)
        #expect(lines == [
            "* URL: http://nx.example.test:\(port)/",
            "* Failed after N ms: nx.example.test: NXDOMAIN (the name does not exist)",
            "hostpin: could not resolve host nx.example.test: NXDOMAIN (the name does not exist)",
        ])
    }
}
