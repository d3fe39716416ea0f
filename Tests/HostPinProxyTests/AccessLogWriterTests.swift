import Foundation
@testable import HostPin
import HostPinNet
@testable import HostPinProxy
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// ``AccessLogWriter`` on a pipe: appends never wait for the reader; a full queue drops lines and says
/// how many, where they were.
@Suite struct AccessLogWriterTests {
    @Test func fullQueueDropsAndCountsLinesInTheirPlace() async throws {
        let (readEnd, writeEnd) = try Self.smallPipe()
        defer { close(readEnd) }
        let writer = AccessLogWriter(descriptor: writeEnd, capacity: 1000)
        let padding = String(repeating: "x", count: 80)
        // 90 KB of lines against a 4 KiB pipe nobody reads yet and a 1000-byte queue: this loop ends only
        // because appending never waits.
        for index in 0..<1000 { writer.append("line \(index) \(padding)") }

        let text = try await TestSockets.offPool { Self.read(readEnd, until: { Self.accounted($0) >= 1000 }) }
        let lines = text.split(separator: "\n").map(String.init)
        let dropped = lines.compactMap(Self.droppedCount).reduce(0, +)
        print("access log writer: \(lines.count - lines.compactMap(Self.droppedCount).count) lines written, \(dropped) dropped")
        #expect(dropped > 0)
        #expect(Self.accounted(text) == 1000)
        // Every notice stands exactly where its lines were: between line a and line b it counts b - a - 1.
        var expected = 0
        var gap = 0
        for line in lines {
            if let count = Self.droppedCount(line) {
                gap += count
            } else {
                let index = Int(line.split(separator: " ")[1])
                #expect(index == expected + gap, "after line \(expected - 1) and \(gap) dropped: \(line.prefix(20))")
                expected = (index ?? 0) + 1
                gap = 0
            }
        }
        #expect(await writer.finish(within: .seconds(2)))
        close(writeEnd)
    }

    @Test func finishWritesWhatIsQueuedAndLaterLinesAreIgnored() async throws {
        let (readEnd, writeEnd) = try Self.smallPipe()
        defer { close(readEnd) }
        let writer = AccessLogWriter(descriptor: writeEnd)
        for index in 0..<3 { writer.append("line \(index)") }
        #expect(await writer.finish(within: .seconds(2)))
        writer.append("too late")
        #expect(await writer.finish(within: .seconds(2)))
        close(writeEnd)
        let text = try await TestSockets.offPool { Self.read(readEnd, until: { _ in false }) }
        #expect(text == "line 0\nline 1\nline 2\n")
    }

    /// A failure is the last field, quoted, with quotes, backslashes and control characters escaped, so
    /// the entry stays one line.
    @Test func failureIsTheLastFieldQuotedAndEscaped() {
        let entry = AccessLogEntry(unixSeconds: 0, nanoseconds: 0, client: nil, method: "GET", target: "http://x.test/", pinned: nil,
                                   status: 502, bytes: 0, duration: .zero, rules: [], source: nil,
                                   failure: "x.test: bogus \"A\"\nnext\\")
        #expect(entry.description == #"1970-01-01T00:00:00.000Z - GET http://x.test/ - 502 0 0.000ms - - "x.test: bogus \"A\"\x0anext\\""#)
        let plain = AccessLogEntry(unixSeconds: 0, nanoseconds: 0, client: nil, method: "GET", target: "http://x.test/", pinned: nil,
                                   status: 502, bytes: 0, duration: .zero, rules: [], source: nil)
        #expect(plain.description == "1970-01-01T00:00:00.000Z - GET http://x.test/ - 502 0 0.000ms - -")
    }

    /// An entry is written as its ``AccessLogEntry/description`` (formatted by the writer thread), and
    /// its line is no longer than ``AccessLogEntry/maximumLineLength``, which the queue counts it at, even
    /// with the widest addresses, byte count and duration.
    @Test func entriesAreWrittenAsTheirLinesWithinTheirCountedLength() async throws {
        let (readEnd, writeEnd) = try Self.smallPipe()
        defer { close(readEnd) }
        let widest = try #require(IPAddress("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"))
        let entries = [
            AccessLogEntry(unixSeconds: 1_795_000_000, nanoseconds: 123_456_789, client: SocketAddress(address: widest, port: 65535),
                           method: "GET", target: "http://www.example.test/whoami", pinned: SocketAddress(address: widest, port: 65535),
                           status: 200, bytes: .max, duration: .seconds(Int64.max / 1_000_000),
                           rules: [RuleReference(index: 12, summary: "pin"), RuleReference(index: 3, summary: "redirect")],
                           source: .pinnedByRule),
            AccessLogEntry(unixSeconds: 0, nanoseconds: 0, client: nil, method: "-", target: "-", pinned: nil, status: 400,
                           bytes: 0, duration: .zero, rules: [], source: nil),
            // A resolution failure's sentence, every byte of it needing an escape at worst.
            AccessLogEntry(unixSeconds: 0, nanoseconds: 0, client: nil, method: "GET", target: "http://x.test/", pinned: nil,
                           status: 502, bytes: 0, duration: .zero, rules: [], source: nil,
                           failure: String(repeating: "\u{1}", count: 40) + "\"\\\n"),
        ]
        let writer = AccessLogWriter(descriptor: writeEnd)
        for entry in entries {
            #expect(entry.description.utf8.count <= entry.maximumLineLength, "\(entry.description)")
            writer.append(entry)
        }
        #expect(await writer.finish(within: .seconds(2)))
        close(writeEnd)
        let text = try await TestSockets.offPool { Self.read(readEnd, until: { _ in false }) }
        #expect(text == entries.map { $0.description + "\n" }.joined())
    }

    /// A pipe whose buffer is one page (4 KiB).
    static func smallPipe() throws -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0, fcntl(ends[0], 1031 /* F_SETPIPE_SZ */, 4096) == 4096 else {
            throw TestSockets.Failure(description: "pipe: errno \(errno)")
        }
        return (ends[0], ends[1])
    }

    /// Reads `descriptor` until `done` says so, end of file, or 10 s.
    static func read(_ descriptor: Int32, until done: (String) -> Bool) -> String {
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, !done(text) {
            var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 200) > 0 else { continue }
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            if count <= 0 { break }
            text += String(decoding: buffer[..<count], as: UTF8.self)
        }
        return text
    }

    /// Lines written plus lines counted as dropped, among the complete lines of `text`.
    static func accounted(_ text: String) -> Int {
        let complete = text.lastIndex(of: "\n").map { text[...$0] } ?? ""
        return complete.split(separator: "\n").map(String.init).reduce(0) { $0 + (droppedCount($1) ?? 1) }
    }

    /// N in `hostpin: N access-log lines dropped (…)`.
    static func droppedCount(_ line: String) -> Int? {
        guard line.hasPrefix("hostpin: "), line.contains(" access-log lines dropped (the output was not read fast enough)") else { return nil }
        return Int(line.split(separator: " ")[1])
    }
}
