import Foundation
import HostPinTestSupport
import Testing

/// hostpin(1) and hostpin.json(5), as `hostpin --generate-manual` makes them from the --help texts and
/// the configuration schema: they render without a warning, and they hold every subcommand, option,
/// exit status, signal and configuration key those sources have.
@Suite struct ManualPageTests {
    static let pages = ["hostpin.1", "hostpin.json.5"]
    static let subcommands = ["lookup", "compare", "fetch", "proxy", "serve", "ctl", "check-config"]

    /// The page's source, written to a temporary file (man -l reads a file).
    private func page(_ name: String) async throws -> (source: String, file: URL) {
        let result = try await HostPinBinary.run(["--generate-manual", name], environment: ["SOURCE_DATE_EPOCH": "1700000000"])
        #expect(result.status == 0)
        #expect(result.standardError == "")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-manual-\(UUID().uuidString)-\(name)")
        try result.standardOutput.write(to: file, atomically: true, encoding: .utf8)
        return (result.standardOutput, file)
    }

    /// The page as man shows it, one wide line per paragraph line (so a search finds words a narrow page breaks).
    private func rendered(_ file: URL) async throws -> ProcessRunner.Result {
        try await ProcessRunner.run("/usr/bin/man", ["-l", file.path], environment: ["MANWIDTH": "250", "MAN_KEEP_FORMATTING": "",
                                                                                "LC_ALL": "C.UTF-8", "MANPAGER": "cat", "PAGER": "cat"])
    }

    @Test(arguments: pages)
    func pageRendersWithoutWarnings(_ name: String) async throws {
        let (source, file) = try await page(name)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(source.contains(#".TH "# + (name == "hostpin.1" ? "HOSTPIN 1" : "HOSTPIN.JSON 5") + #" "2023-11-14" "hostpin 0.1.0""#))
        let groff = try await ProcessRunner.run("/usr/bin/groff", ["-ww", "-z", "-man", file.path])
        #expect(groff.status == 0)
        #expect(groff.standardError == "")
        for width in ["60", "80", "120"] {
            let man = try await ProcessRunner.run("/usr/bin/man", ["-l", file.path], environment: ["MANWIDTH": width, "MANPAGER": "cat"])
            #expect(man.status == 0)
            #expect(man.standardError == "", "MANWIDTH=\(width)")
        }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/mandoc") {
            let lint = try await ProcessRunner.run("/usr/bin/mandoc", ["-T", "lint", "-W", "warning", file.path])
            #expect(lint.standardOutput + lint.standardError == "")
        }
    }

    /// Every option of every subcommand's help, every exit status of the tool's help and every signal
    /// a subcommand's help lists are in hostpin(1), as man shows it.
    @Test func hostpinPageHasEverySubcommandOptionExitStatusAndSignal() async throws {
        let (_, file) = try await page("hostpin.1")
        defer { try? FileManager.default.removeItem(at: file) }
        let text = try await rendered(file).standardOutput
        for name in Self.subcommands {
            #expect(text.contains("   hostpin \(name)\n"), "no section for \(name)")
            let help = try await HostPinBinary.run([name, "--help"]).standardOutput
            let options = help.split(separator: "\n").filter { $0.hasPrefix("  -") }.map { line in
                line.dropFirst(2).prefix { $0 != " " && $0 != "," }
            }
            #expect(!options.isEmpty || name == "check-config")
            for option in options {
                #expect(text.contains("       \(option)"), "hostpin \(name): \(option) is not an entry of the page")
            }
        }
        let toolHelp = try await HostPinBinary.run(["--help"]).standardOutput
        let statuses = toolHelp.split(separator: "\n", omittingEmptySubsequences: false).drop { $0 != "EXIT STATUS:" }.dropFirst()
            .prefix { !$0.isEmpty }.map { $0.trimmingCharacters(in: .whitespaces).prefix { $0 != " " } }
        #expect(statuses == ["0", "1", "2", "3", "4", "5", "6", "7", "22", "28", "35", "47", "56", "60", "77"])
        let exitSection = "\n" + (text.components(separatedBy: "\nEXIT STATUS\n").last ?? "")
        for status in statuses {
            #expect(exitSection.contains("\n       \(status) "), "exit status \(status) is missing")
        }
        let signals = text.components(separatedBy: "\nSIGNALS\n").last ?? ""
        #expect(signals.contains("hostpin proxy:"))
        #expect(signals.contains("hostpin serve:"))
        #expect(signals.contains("SIGHUP"))
        #expect(signals.contains("SIGINT, SIGTERM"))
        #expect(text.contains("hostpin - resolve host names through trusted DNS servers only"))
    }

    /// Every key `check-config` prints for an empty file (each with its default) is an entry of
    /// hostpin.json(5), with its option.
    @Test func configPageHasEveryKey() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-manual-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("empty.json")
        try "{}".write(to: config, atomically: true, encoding: .utf8)
        let checked = try await HostPinBinary.run(["check-config", config.path])
        #expect(checked.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(checked.standardOutput.utf8)) as? [String: Any])
        var paths: [String] = []
        for (section, value) in object {
            if let fields = value as? [String: Any] { paths += fields.keys.map { "\(section).\($0)" } } else { paths.append(section) }
        }
        #expect(paths.count > 30)
        let (_, file) = try await page("hostpin.json.5")
        defer { try? FileManager.default.removeItem(at: file) }
        let text = try await rendered(file).standardOutput
        for path in paths {
            // A tag narrower than the indentation shares its line with the description (`routes`, one
            // column narrower, with one space before it).
            #expect(text.contains("\n       \(path)\n") || text.contains("\n       \(path)  ")
                        || text.contains("\n       \(path) Option: "), "key \(path) is not an entry of hostpin.json(5)")
        }
        #expect(text.contains("Option: --server, read by lookup, fetch, proxy, serve."))
        #expect(text.contains("Option: --log-format, read by proxy, serve. Default: \"text\"."))
    }

    @Test func unknownPageIsAUsageError() async throws {
        let result = try await HostPinBinary.run(["--generate-manual", "hostpin.8"])
        #expect(result.status == 2)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "hostpin: error: invalid value for '--generate-manual': 'hostpin.8' is not one of "
                    + "hostpin.1, hostpin.json.5.\nSee 'hostpin --help'.\n")
    }
}
