import Foundation
import Synchronization
import HostPin
import HostPinService

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One item `hostpin lookup` works through, in input order.
enum LookupEntry: Sendable {
    /// A valid name to resolve.
    case name(HostName)
    /// A `--batch` line that is not a host name: reported like a failed name (exit 2), and the batch goes on.
    case invalid(text: String, problem: HostNameProblem)
    /// The `--batch` input could not be read further: the sentence says why; nothing follows.
    case unreadable(String)
}

/// Where `hostpin lookup` takes its names from, a few at a time, so a long input is never held whole.
protocol LookupFeed: Sendable {
    /// Up to `limit` (at least 1) further entries, in input order: those at hand without waiting, or, when
    /// none is, the next ones once they arrive. Empty at the end of the input.
    func take(upTo limit: Int) async -> [LookupEntry]
}

/// The names given as arguments (validated while parsing).
actor NameListFeed: LookupFeed {
    private let names: [HostName]
    private var next = 0

    init(_ names: [HostName]) {
        self.names = names
    }

    func take(upTo limit: Int) -> [LookupEntry] {
        let end = min(names.count, next + max(1, limit))
        defer { next = end }
        return names[next..<end].map(LookupEntry.name)
    }
}

/// How far `--batch`'s names have been taken into its input, read by the progress line while the feed
/// works: an atomic, since the progress is drawn by the loop that reports names, not by the feed.
final class ReadPosition: Sendable {
    /// Bytes of the input that the entries taken so far came from.
    let taken = Atomic<Int>(0)
    /// The input's size when it is a regular file (a pipe's or a terminal's end is not known).
    let size: Int?

    init(descriptor: Int32) {
        var status = stat()
        size = fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG ? Int(status.st_size) : nil
    }

    /// The part of the input taken, from 0 to 1; `nil` when the size is not known (or zero).
    var fraction: Double? {
        guard let size, size > 0 else { return nil }
        return min(1, Double(taken.load(ordering: .relaxed)) / Double(size))
    }
}

/// `--batch FILE|-`: names read line by line as they are needed — one line per name, surrounding blanks
/// and a CR before the LF ignored, blank lines and `#` comment lines skipped. Reads happen on a Dispatch
/// thread in chunks of 64 KiB, so a slow pipe never blocks a thread of Swift's cooperative pool, and
/// memory holds at most one chunk and one line.
actor BatchFeed: LookupFeed {
    /// The most bytes one line may have: far more than any host name in Unicode form (253 octets as
    /// A-labels); a longer line is reported as too long without being held.
    static let maxLineLength = 4096
    /// The size of one read.
    static let chunkSize = 64 * 1024

    private let handle: FileHandle
    /// `standard input` or the path, for messages.
    private let source: String
    private var buffer: [UInt8] = []
    /// Where the unread part of ``buffer`` starts.
    private var start = 0
    private var atEnd = false
    /// Set while skipping the rest of an over-long line: its first characters and its length so far.
    private var overlong: (prefix: String, length: Int)?
    /// Every byte read so far.
    private var bytesRead = 0
    /// How far the names taken have got into the input, for `lookup`'s progress line.
    nonisolated let position: ReadPosition

    /// Opens `path` (`-` for standard input) and checks, before any query is sent, that it can be read and
    /// is not a directory.
    ///
    /// - Throws: ``UsageError`` with the system's reason.
    init(path: String) throws(UsageError) {
        if path == "-" {
            try InputFile.checkStandardInput()
            handle = FileHandle.standardInput
            source = "standard input"
            position = ReadPosition(descriptor: STDIN_FILENO)
        } else {
            try InputFile.checkReadable(path, option: "--batch")
            do {
                handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            } catch {
                throw .unreadableFile(option: "--batch", path: path, reason: FileAccess.reason(error))
            }
            source = "'\(path)' for '--batch'"
            position = ReadPosition(descriptor: handle.fileDescriptor)
        }
    }

    func take(upTo limit: Int) async -> [LookupEntry] {
        var entries: [LookupEntry] = []
        while entries.count < max(1, limit) {
            if let entry = nextBufferedEntry() {
                entries.append(entry)
                continue
            }
            // Nothing complete at hand: return what there is rather than wait, unless that is nothing.
            guard entries.isEmpty, !atEnd else { break }
            do {
                let chunk = try await readChunk()
                if chunk.isEmpty { atEnd = true } else { append(chunk) }
                bytesRead += chunk.count
            } catch {
                atEnd = true
                buffer = []
                start = 0
                overlong = nil
                entries.append(.unreadable("cannot read \(source): \(FileAccess.reason(error))"))
            }
        }
        position.taken.store(bytesRead - (buffer.count - start), ordering: .relaxed)
        return entries
    }

    /// The next entry from the bytes already read, or `nil` when more must be read first (or the input
    /// has ended).
    private func nextBufferedEntry() -> LookupEntry? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                if let skipped = overlong {
                    overlong = nil
                    return Self.tooLong(skipped.prefix, length: skipped.length + line.count)
                }
                if line.count > Self.maxLineLength { return Self.tooLong(Self.prefix(of: line), length: line.count) }
                if let entry = Self.entry(for: line) { return entry }
                continue
            }
            let pending = buffer.count - start
            if let skipped = overlong {
                overlong = (skipped.prefix, skipped.length + pending)
                dropConsumed(all: true)
                if atEnd {
                    overlong = nil
                    return Self.tooLong(skipped.prefix, length: skipped.length + pending)
                }
                return nil
            }
            if pending > Self.maxLineLength {
                overlong = (Self.prefix(of: buffer[start...]), pending)
                dropConsumed(all: true)
                continue
            }
            if atEnd, pending > 0 {
                // The last line has no newline.
                let line = buffer[start...]
                dropConsumed(all: true)
                if let entry = Self.entry(for: line) { return entry }
                continue
            }
            dropConsumed(all: false)
            return nil
        }
    }

    private func append(_ chunk: Data) {
        buffer.append(contentsOf: chunk)
    }

    /// Forgets consumed bytes (`all`: every byte read so far).
    private func dropConsumed(all: Bool) {
        if all {
            buffer.removeAll(keepingCapacity: true)
        } else if start > 0 {
            buffer.removeFirst(start)
        }
        start = 0
    }

    /// Reads the next chunk on a thread of its own; empty at the end of the input. One `read(2)`: what a
    /// pipe has now, not a wait for a full chunk (`FileHandle.read(upToCount:)` waits for the count or the
    /// end, so names typed or piped slowly were not resolved until 64 KiB or the end had come).
    private func readChunk() async throws -> Data {
        let descriptor = handle.fileDescriptor
        return try await Blocking.run {
            var chunk = Data(count: Self.chunkSize)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count >= 0 { return chunk.prefix(count) }
                switch errno {
                case EINTR:
                    continue
                case EAGAIN, EWOULDBLOCK:
                    // A non-blocking descriptor inherited from the shell: wait until it is readable.
                    var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                    _ = poll(&waiting, 1, -1)
                default:
                    throw NSError(domain: NSPOSIXErrorDomain, code: Int(errno))
                }
            }
        }
    }

    /// The entry for one line's bytes (without its LF), or `nil` for a blank or comment line.
    static func entry(for line: ArraySlice<UInt8>) -> LookupEntry? {
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") }
        guard let first = line.firstIndex(where: { !isBlank($0) }), let last = line.lastIndex(where: { !isBlank($0) }),
              line[first] != UInt8(ascii: "#")
        else { return nil }
        let text = String(decoding: line[first...last], as: UTF8.self)
        do throws(ResolutionError) {
            return .name(try HostName.parse(text))
        } catch {
            if case .badName(let input, let problem) = error { return .invalid(text: input, problem: problem) }
            return .invalid(text: text, problem: .idna(error.description))
        }
    }

    /// The first 40 bytes of an over-long line, to name it in its error.
    private static func prefix(of line: ArraySlice<UInt8>) -> String {
        String(decoding: line.prefix(40), as: UTF8.self)
    }

    private static func tooLong(_ prefix: String, length: Int) -> LookupEntry {
        .invalid(text: prefix + "…", problem: .nameTooLong(octets: length))
    }
}
