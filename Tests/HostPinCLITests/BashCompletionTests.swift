import Foundation
import HostPinTestSupport
import Testing

/// The bash completion script `hostpin --generate-completion-script bash` writes (and the package installs
/// as /usr/share/bash-completion/completions/hostpin), asked as bash asks it: COMP_WORDS and COMP_CWORD
/// set, `_hostpin` called, COMPREPLY read.
@Suite struct BashCompletionTests {
    /// The script in a temporary folder that also holds two files, for file-name completion.
    private final class Script: Sendable {
        let folder: URL
        init(_ source: String) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-completion-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try source.write(to: folder.appendingPathComponent("hostpin"), atomically: true, encoding: .utf8)
            try "{}".write(to: folder.appendingPathComponent("config.json"), atomically: true, encoding: .utf8)
            try "".write(to: folder.appendingPathComponent("names.txt"), atomically: true, encoding: .utf8)
        }
        deinit { try? FileManager.default.removeItem(at: folder) }

        /// What `_hostpin` offers for `words`, the last one being the word under the cursor.
        func complete(_ words: [String]) async throws -> [String] {
            let result = try await ProcessRunner.run("/bin/bash", ["-c", """
                cd "$0" && source ./hostpin && COMP_WORDS=("$@") && COMP_CWORD=$(( $# - 1 )) && _hostpin && printf '%s\\n' "${COMPREPLY[@]}"
                """, folder.path] + words)
            #expect(result.status == 0, "\(words): \(result.standardError)")
            #expect(result.standardError == "", "\(words)")
            return result.standardOutput.split(separator: "\n").map(String.init)
        }
    }

    private func script() async throws -> Script {
        let result = try await HostPinBinary.run(["--generate-completion-script", "bash"])
        #expect(result.status == 0)
        #expect(result.standardError == "")
        let syntax = try await ProcessRunner.run("/bin/bash", ["-n", "-c", result.standardOutput])
        #expect(syntax.status == 0, "\(syntax.standardError)")
        return try Script(result.standardOutput)
    }

    @Test func completesSubcommands() async throws {
        let script = try await script()
        #expect(try await script.complete(["hostpin", ""]) == ["lookup", "compare", "fetch", "proxy", "serve", "ctl", "check-config", "help"])
        #expect(try await script.complete(["hostpin", "c"]) == ["compare", "ctl", "check-config"])
        #expect(try await script.complete(["hostpin", "--v"]) == ["--version"])
        #expect(try await script.complete(["hostpin", "help", "s"]) == ["serve"])
        #expect(try await script.complete(["hostpin", "ctl", ""]) == ["flush", "stats", "upstreams", "status"])
    }

    /// Each subcommand offers exactly the options its --help lists, no more.
    @Test(arguments: ["lookup", "compare", "fetch", "proxy", "serve", "ctl"])
    func completesEveryOptionTheHelpLists(_ name: String) async throws {
        let script = try await script()
        let help = try await HostPinBinary.run([name, "--help"]).standardOutput
        let listed = Set(help.split(separator: "\n").filter { $0.hasPrefix("  -") }.flatMap { line -> [String] in
            // "  -o, --output FILE   ..." names -o and --output.
            line.split(separator: " ").prefix { $0.hasPrefix("-") }.map { String($0.hasSuffix(",") ? $0.dropLast() : $0) }
        })
        let offered = try await script.complete(["hostpin", name, "-"])
        #expect(Set(offered) == listed)
        #expect(offered.count == listed.count, "an option is offered twice")
    }

    /// The options with a fixed set of values offer that set: from the type the option's parser reads.
    @Test(arguments: [
        (["hostpin", "lookup", "--family", ""], ["4", "6", "any"]),
        (["hostpin", "lookup", "www.example.test", "--family", "a"], ["any"]),
        (["hostpin", "compare", "--family", ""], ["4", "6", "any"]),
        (["hostpin", "serve", "--log-format", ""], ["text", "json"]),
        (["hostpin", "proxy", "--log-level", "w"], ["warning"]),
        (["hostpin", "serve", "--blocked-answer", ""], ["nxdomain", "unspecified"]),
        (["hostpin", "lookup", "--dnssec", ""], ["validate", "report", "off"]),
        (["hostpin", "fetch", "--dnssec", "r"], ["report"]),
        // --opt=value: bash splits the word at '='.
        (["hostpin", "lookup", "--family", "=", ""], ["4", "6", "any"]),
        (["hostpin", "lookup", "--family", "="], ["4", "6", "any"]),
        (["hostpin", "serve", "--log-format", "=", "j"], ["json"]),
    ])
    func completesFixedValues(_ words: [String], _ expected: [String]) async throws {
        #expect(try await script().complete(words) == expected)
    }

    @Test func completesFilesForFileValuesAndNothingForOtherValues() async throws {
        let script = try await script()
        #expect(try await script.complete(["hostpin", "lookup", "--batch", "n"]) == ["names.txt"])
        #expect(try await script.complete(["hostpin", "serve", "--config", "c"]) == ["config.json"])
        #expect(try await script.complete(["hostpin", "fetch", "-o", "n"]) == ["names.txt"])
        #expect(try await script.complete(["hostpin", "check-config", "c"]) == ["config.json"])
        #expect(try await script.complete(["hostpin", "lookup", "--server", ""]) == [])
        #expect(try await script.complete(["hostpin", "lookup", "--timeout", ""]) == [])
        // A flag takes no value: the next word is a name or an option again.
        #expect(try await script.complete(["hostpin", "lookup", "--json", "--ti"]) == ["--timeout"])
    }

    @Test func otherShellIsAUsageError() async throws {
        let result = try await HostPinBinary.run(["--generate-completion-script", "zsh"])
        #expect(result.status == 2)
        #expect(result.standardError == "hostpin: error: invalid value for '--generate-completion-script': 'zsh' is not bash, "
                    + "the one shell it writes for.\nSee 'hostpin --help'.\n")
    }
}
