import Foundation
import HostPinTestSupport
import Testing

/// The progress line of `lookup --batch`: on a terminal's standard error (read here through the
/// pseudo-terminal `script` gives the command) and never elsewhere. Unvalidated (`--dnssec off`): the
/// tests count answer lines, and a validated answer adds its `; secure` line.
@Suite struct LookupProgressTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// `text` split at every CR and LF.
    static func lines(_ text: String) -> [String] {
        text.unicodeScalars.split { $0 == "\r" || $0 == "\n" }.map { String(String.UnicodeScalarView($0)) }
    }

    /// 2000 names, half NXDOMAIN at the lab's NSD.
    static let names = (1...2000).map { $0 % 2 == 0 ? "www.example.test" : "nx\($0).example.test" }

    private func withNames<T>(_ body: (_ names: String, _ folder: URL) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-progress-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("names.txt")
        try Data((Self.names.joined(separator: "\n") + "\n").utf8).write(to: path)
        return try await body(path.path, folder)
    }

    /// Standard error on a terminal, standard output to a file: the line is redrawn (carriage return,
    /// erase line) with new counts at most 4 times a second, each NXDOMAIN sentence goes above it whole,
    /// and the final count stays as the last line.
    @Test func batchOnATerminalShowsCountsRateAndTimeLeft() async throws {
        try await withNames { names, folder in
            let answers = folder.appendingPathComponent("answers.txt").path
            let command = "exec \"$0\" lookup --batch \"$1\" --server \"$2\" --dnssec off --concurrency 8 >\"$3\""
            let started = ContinuousClock.now
            let result = try await ProcessRunner.run("/usr/bin/script", [
                "-qec", "sh -c '\(command)' \(try HostPinBinary.path()) \(names) \(lab.trustedDNS) \(answers)", "/dev/null",
            ], environment: ["HOSTPIN_UPSTREAMS": ""])
            let elapsed = ContinuousClock.now - started
            #expect(result.status == 1)   // NXDOMAIN for half the names
            let terminal = result.standardOutput
            // What the terminal shows, piece by piece: each carriage return starts a redraw or a message (split
            // by scalar: the terminal's CR LF is one Character of a Swift String).
            let pieces = Self.lines(terminal).map { $0.replacingOccurrences(of: "\u{1B}[K", with: "") }.filter { !$0.isEmpty }
            let statuses = pieces.filter { $0.hasPrefix("hostpin: ") && $0.contains(" names done, ") }
            let messages = pieces.filter { !$0.contains(" names done, ") }
            #expect(messages.count == 1000)
            #expect(messages.allSatisfy { $0.wholeMatch(of: /hostpin: nx[0-9]+\.example\.test: NXDOMAIN \(the name does not exist\)/) != nil },
                    "\(messages.prefix(3))")
            let last = try #require(statuses.last)
            #expect(last.wholeMatch(of: /hostpin: 2000 names done, 1000 answered, 1000 failed, [0-9]+ names\/s, [0-9]+:[0-9]{2} in all/) != nil,
                    "\(last)")
            #expect(terminal.hasSuffix(last + "\r\n"), "the last count is not left as a line: \(terminal.suffix(200).debugDescription)")
            // New counts at most every 250 ms (a message redraws the same count below it).
            var distinct: [String] = []
            for status in statuses where status != distinct.last { distinct.append(status) }
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            #expect(Double(distinct.count) <= seconds * 4 + 2, "\(distinct.count) counts in \(seconds) s")
            for status in distinct.dropLast() {
                #expect(status.wholeMatch(of: /hostpin: [0-9]+ names done, [0-9]+ answered, [0-9]+ failed, [0-9]+ names\/s(, [0-9]+:[0-9]{2} left)?/) != nil,
                        "\(status)")
            }
            // The answers went to the file, untouched by the progress line.
            let output = try String(contentsOfFile: answers, encoding: .utf8)
            #expect(output.split(separator: "\n").count == 1000)
            #expect(!output.contains("\u{1B}") && !output.contains("\r") && !output.contains("names done"))
        }
    }

    /// Standard error a pipe (or a file): no progress line, no control character, whatever standard
    /// output is; names given as arguments: none on a terminal either.
    @Test func noProgressLineWhenStandardErrorIsNotATerminal() async throws {
        try await withNames { names, _ in
            let result = try await HostPinBinary.run(["lookup", "--batch", names, "--server", "\(lab.trustedDNS)", "--dnssec", "off"])
            #expect(result.status == 1)
            #expect(result.standardOutput.split(separator: "\n").count == 1000)
            #expect(result.standardError.split(separator: "\n").count == 1000)
            #expect(!result.standardError.contains("names done"))
            #expect(!result.standardError.contains("\u{1B}") && !result.standardError.contains("\r"))
            // Standard output a terminal, standard error a file: still none.
            let onTerminal = try await ProcessRunner.run("/usr/bin/script", [
                "-qec", "sh -c 'exec \"$0\" lookup --batch \"$1\" --server \"$2\" --dnssec off 2>/dev/null' \(try HostPinBinary.path()) \(names) \(lab.trustedDNS)",
                "/dev/null",
            ], environment: ["HOSTPIN_UPSTREAMS": ""])
            #expect(!onTerminal.standardOutput.contains("names done"))
            #expect(Self.lines(onTerminal.standardOutput).count == 1000)
        }
        let arguments = try await ProcessRunner.run("/usr/bin/script", [
            "-qec", "\(try HostPinBinary.path()) lookup www.example.test --server \(lab.trustedDNS) --dnssec off", "/dev/null",
        ], environment: ["HOSTPIN_UPSTREAMS": ""])
        #expect(arguments.standardOutput == "www.example.test. 3600 IN A 127.0.0.10\r\n")
    }
}
