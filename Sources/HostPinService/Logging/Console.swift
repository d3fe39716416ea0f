import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writing to the standard streams, with `write(2)` on descriptors 1 and 2 (the C `stdout`/`stderr`
/// globals are mutable variables Swift 6 will not share across concurrency domains, and Foundation's
/// non-throwing `FileHandle.write(_:)` traps on a write error).
///
/// Standard output is unbuffered by default, one `write` per call, so results stream as they are printed
/// (the proxy's access log, `compare`). A command that prints many lines calls ``bufferOutput()``: output
/// then collects in a 64 KiB buffer, written when it is full, ``flushDelay`` after the first byte was
/// buffered (so a slow batch still streams), before every line written to standard error (so errors and
/// answers stay in order on a terminal) and in ``finish(_:)``. The first failure (`>/dev/full`, `>&-`) is
/// remembered, later output is dropped, and ``finish(_:)`` turns it into exit status 1 with one sentence.
/// Every line written to standard error is passed through ``escaped(_:)`` first: messages echo user
/// input, which must not move the cursor, recolour the terminal or add lines.
package enum Console {
    /// How much buffered output is collected before it is written.
    package static let bufferCapacity = 64 * 1024
    /// The longest buffered output waits before it is written, however little there is.
    package static let flushDelay = DispatchTimeInterval.milliseconds(50)

    private struct Output {
        /// Why standard output could not be written, once it could not.
        package var failure: String?
        /// Whether output is buffered (``bufferOutput()``).
        package var buffering = false
        /// Output not yet written.
        package var buffer: [UInt8] = []
        /// Whether a delayed flush is pending.
        package var flushScheduled = false
    }

    private static let output = Mutex(Output())
    /// Serialises writes to standard error so concurrent messages stay whole lines; holds the status line
    /// shown below them on a terminal (``showStatus(_:)``), if any.
    private static let errorLock = Mutex<String?>(nil)
    /// Where delayed flushes run: a serial queue of its own, never the cooperative pool.
    private static let flushQueue = DispatchQueue(label: "hostpin-stdout")

    /// Makes sure descriptors 0, 1 and 2 are open before anything else opens a file or socket: a closed
    /// one (`<&-`, `>&-`) would otherwise be taken by the next `open` or `socket`, and output meant for the
    /// terminal would go into a DNS socket. A closed descriptor is filled with `/dev/null` opened the other
    /// way round (0 write-only, 1 and 2 read-only), so reading or writing it still fails with `EBADF`, as
    /// on the closed descriptor.
    package static func prepareStandardStreams() {
        for (descriptor, flags) in [(Int32(0), O_WRONLY), (1, O_RDONLY), (2, O_RDONLY)]
        where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            let placeholder = open("/dev/null", flags)
            if placeholder >= 0, placeholder != descriptor {
                dup2(placeholder, descriptor)
                close(placeholder)
            }
        }
    }

    /// From now on, standard output is buffered (see ``Console``).
    package static func bufferOutput() {
        output.withLock { output in
            output.buffering = true
            output.buffer.reserveCapacity(bufferCapacity + 4096)
        }
    }

    /// Writes `line` and a newline to standard output; `false` once output has failed.
    @discardableResult
    package static func out(_ line: String) -> Bool {
        out(lines: [line])
    }

    /// Writes `lines`, each with a newline, to standard output in one piece (so concurrent callers do not
    /// interleave); `false` once output has failed.
    @discardableResult
    package static func out(lines: [String]) -> Bool {
        guard !lines.isEmpty else { return !outputFailed }
        return out { bytes in
            for line in lines {
                bytes.append(contentsOf: line.utf8)
                bytes.append(UInt8(ascii: "\n"))
            }
        }
    }

    /// Writes what `body` appends to the bytes it is given — whole lines, each with its newline — to
    /// standard output in one piece; `false` once output has failed. `body` runs under the output lock:
    /// it must only append.
    @discardableResult
    package static func out(appending body: (inout [UInt8]) -> Void) -> Bool {
        let scheduleFlush = output.withLock { output -> Bool? in
            guard output.failure == nil else { return nil }
            guard output.buffering else {
                var bytes: [UInt8] = []
                body(&bytes)
                writeOut(bytes, into: &output)
                return output.failure == nil ? false : nil
            }
            body(&output.buffer)
            if output.buffer.count >= bufferCapacity {
                flush(&output)
            } else if !output.flushScheduled, !output.buffer.isEmpty {
                output.flushScheduled = true
                return true
            }
            return output.failure == nil ? false : nil
        }
        guard let scheduleFlush else { return false }
        if scheduleFlush {
            flushQueue.asyncAfter(deadline: .now() + flushDelay) {
                output.withLock { output in
                    output.flushScheduled = false
                    flush(&output)
                }
            }
        }
        return true
    }

    /// Writes buffered output now.
    package static func flush() {
        output.withLock { flush(&$0) }
    }

    /// Why a write to standard output failed, once one has (buffered output written first).
    package static var outputFailure: String? {
        flush()
        return output.withLock { $0.failure }
    }

    /// Whether a write to standard output has failed.
    package static var outputFailed: Bool {
        output.withLock { $0.failure != nil }
    }

    private static func flush(_ output: inout Output) {
        guard !output.buffer.isEmpty else { return }
        if output.failure == nil { writeOut(output.buffer, into: &output) }
        output.buffer.removeAll(keepingCapacity: true)
    }

    /// Writes `bytes` to standard output, or remembers why that failed. When standard output is the
    /// terminal that shows a status line, the output goes above the status line, which is drawn again.
    private static func writeOut(_ bytes: [UInt8], into output: inout Output) {
        let errorNumber = errorLock.withLock { status -> Int32? in
            guard let status, standardOutputIsTerminal else { return writeAll(bytes, to: 1) }
            _ = writeAll(Array(clearLine.utf8), to: 2)
            defer { _ = writeAll(Array(status.utf8), to: 2) }
            return writeAll(bytes, to: 1)
        }
        if let errorNumber {
            output.failure = String(cString: strerror(errorNumber))
        }
    }

    /// Whether standard output is a terminal (asked once: it does not change while the process runs).
    private static let standardOutputIsTerminal = isatty(1) == 1

    /// Writes `line`, escaped, and a newline to standard error (as a JSON line at level `error` under
    /// `--log-format json`). A failure there has nowhere to be reported and is ignored.
    package static func error(_ line: String) {
        let format = logSettings.format
        writeError(format.line(.error, line))
    }

    /// Writes the diagnostic `message` at `level` on standard error, in the format in force, unless the
    /// level in force leaves it out (``configureLog(level:format:)``; info and text by default).
    package static func log(_ level: LogLevel, _ message: String) {
        let (threshold, format) = logSettings
        guard level <= threshold else { return }
        writeError(format.line(level, message))
    }

    /// Puts `level` and `format` in force for the diagnostics written from now on (`--log-level`,
    /// `--log-format`).
    package static func configureLog(level: LogLevel, format: LogFormat) {
        logLevelAndFormat.withLock { $0 = (level, format) }
    }

    /// The diagnostics' level and format in force.
    private static let logLevelAndFormat = Mutex<(level: LogLevel, format: LogFormat)>((.info, .text))

    /// The level and format ``log(_:_:)`` and ``error(_:)`` write with.
    package static var logSettings: (level: LogLevel, format: LogFormat) {
        logLevelAndFormat.withLock { $0 }
    }

    /// Writes `line`, already escaped or JSON, and a newline to standard error, in one piece.
    package static func writeErrorLine(_ line: String) {
        writeError(line)
    }

    /// Writes `line`, already escaped or JSON, and a newline to standard error.
    private static func writeError(_ line: String) {
        flush()
        errorLock.withLock { status in
            // A status line is on the terminal's last line: the message takes its place, and it is drawn
            // again below the message.
            let bytes = Array(((status == nil ? "" : clearLine) + line + "\n" + (status ?? "")).utf8)
            _ = writeAll(bytes, to: 2)
        }
    }

    /// Carriage return, then erase to the end of the line (ECMA-48 EL, `CSI K`).
    private static let clearLine = "\r\u{1B}[K"

    /// Whether standard error is a terminal: only then is a status line shown.
    package static var standardErrorIsTerminal: Bool { isatty(2) == 1 }

    /// Shows `text` (one line, no newline) as the status line at the bottom of standard error, replacing
    /// the one shown before; `nil` removes it. Messages written meanwhile appear above it
    /// (``error(_:)``, ``log(_:_:)``). For a terminal only: the caller checks ``standardErrorIsTerminal``.
    package static func showStatus(_ text: String?) {
        flush()
        errorLock.withLock { status in
            guard text != nil || status != nil else { return }
            _ = writeAll(Array((clearLine + (text ?? "")).utf8), to: 2)
            status = text
        }
    }

    /// Leaves the status line shown as an ordinary line of standard error (a newline after it), so that
    /// the last count stays on the terminal; nothing when none is shown.
    package static func keepStatus() {
        flush()
        errorLock.withLock { status in
            guard status != nil else { return }
            _ = writeAll(Array("\n".utf8), to: 2)
            status = nil
        }
    }

    /// `text` with every scalar that could change how a terminal shows the message — C0 and C1 controls
    /// (escape sequences, line breaks, NUL), DEL, the line and paragraph separators and the bidirectional
    /// controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) — written as `\u{1B}`, so
    /// a message stays one visible line that shows what was typed.
    package static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// Writes every byte of `bytes` to `descriptor`, retrying after signals, short writes and a full
    /// non-blocking pipe; returns `errno` of the failure, `nil` on success.
    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written > 0 {
                offset += written
            } else if written < 0, errno == EINTR {
                continue
            } else if written < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                var waiting = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&waiting, 1, -1)
            } else {
                return written < 0 ? errno : EIO
            }
        }
        return nil
    }
}
