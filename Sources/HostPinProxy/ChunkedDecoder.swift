/// An incremental decoder of the chunked transfer coding (RFC 9112 §7.1): feed it bytes as they
/// arrive, in any split, and it reports the data and, at the end, the trailer fields.
struct ChunkedDecoder: Sendable {
    /// What a piece of input contained.
    enum Event: Sendable, Hashable {
        /// Chunk data, in order.
        case data(ArraySlice<UInt8>)
        /// The last chunk and the trailer section were read; the body is complete.
        case end(trailers: HeaderFields)
    }

    private enum State: Sendable, Hashable {
        case sizeLine
        case data(remaining: UInt64)
        case dataCR
        case dataLF
        case trailer
        case done
    }

    /// The longest chunk-size line, extensions included. Default: 4 KiB.
    let maximumSizeLineBytes: Int
    /// The largest trailer section. Default: 16 KiB.
    let maximumTrailerBytes: Int

    private var state = State.sizeLine
    private var line: [UInt8] = []
    private var trailerLines: [[UInt8]] = []
    private var trailerBytes = 0

    init(maximumSizeLineBytes: Int = 4096, maximumTrailerBytes: Int = 16_384) {
        self.maximumSizeLineBytes = maximumSizeLineBytes
        self.maximumTrailerBytes = maximumTrailerBytes
    }

    /// Whether the last chunk and trailers have been read.
    var isComplete: Bool { state == .done }

    /// Decodes as much of `input` as belongs to the body.
    ///
    /// - Returns: The events, and how many bytes of `input` were consumed: all of it until the body
    ///   ends; after that, the rest belongs to the next message.
    /// - Throws: ``ChunkError``.
    mutating func feed(_ input: ArraySlice<UInt8>) throws(ChunkError) -> (events: [Event], consumed: Int) {
        var events: [Event] = []
        var index = input.startIndex
        while index < input.endIndex, state != .done {
            switch state {
            case .data(let remaining):
                let take = Int(min(UInt64(input.endIndex - index), remaining))
                events.append(.data(input[index..<(index + take)]))
                index += take
                state = remaining == UInt64(take) ? .dataCR : .data(remaining: remaining - UInt64(take))
            case .dataCR:
                guard input[index] == HeadSyntax.cr else { throw .missingCRLFAfterData }
                index += 1
                state = .dataLF
            case .dataLF:
                guard input[index] == HeadSyntax.lf else { throw .missingCRLFAfterData }
                index += 1
                state = .sizeLine
            case .sizeLine, .trailer:
                let byte = input[index]
                index += 1
                if let last = line.last, last == HeadSyntax.cr, byte != HeadSyntax.lf { throw .bareCR }
                if byte == HeadSyntax.lf {
                    guard line.last == HeadSyntax.cr else { throw .bareLF }
                    line.removeLast()
                    if state == .sizeLine {
                        try endSizeLine(&events)
                    } else {
                        try endTrailerLine(&events)
                    }
                    line.removeAll(keepingCapacity: true)
                    continue
                }
                line.append(byte)
                if state == .sizeLine, line.count > maximumSizeLineBytes + 1 {
                    throw .sizeLineTooLong(limit: maximumSizeLineBytes)
                }
                if state == .trailer {
                    trailerBytes += 1
                    if trailerBytes > maximumTrailerBytes { throw .trailerTooLarge(limit: maximumTrailerBytes) }
                }
            case .done:
                break
            }
        }
        return (events, index - input.startIndex)
    }

    private mutating func endSizeLine(_ events: inout [Event]) throws(ChunkError) {
        let text = String(decoding: line, as: UTF8.self)
        let digits = line.prefix { isHexDigit($0) }
        guard !digits.isEmpty else { throw .invalidChunkSize(text) }
        let rest = line.dropFirst(digits.count).drop { $0 == HeadSyntax.space || $0 == HeadSyntax.tab }
        if !rest.isEmpty {
            guard rest.first == UInt8(ascii: ";") else { throw .invalidChunkSize(text) }
            guard ChunkExtensions.areValid(rest) else { throw .invalidChunkExtension(text) }
        } else if digits.count != line.count {
            throw .invalidChunkSize(text)  // trailing whitespace with no extension
        }
        let hex = String(decoding: digits, as: UTF8.self)
        guard digits.count <= 15, let size = UInt64(hex, radix: 16) else { throw .chunkSizeTooLarge(hex) }
        state = size == 0 ? .trailer : .data(remaining: size)
    }

    private mutating func endTrailerLine(_ events: inout [Event]) throws(ChunkError) {
        guard line.isEmpty else {
            trailerLines.append(line)
            return
        }
        do throws(HeadError) {
            let fields = try HeadSyntax.fields(trailerLines.map { $0[...] }[...])
            events.append(.end(trailers: fields))
        } catch {
            throw .invalidTrailer(error)
        }
        state = .done
    }

    private func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }
}

/// Writing the chunked transfer coding (RFC 9112 §7.1).
enum ChunkedEncoder {
    /// One chunk: size in hex, CRLF, the data, CRLF. Empty data gives no bytes (an empty chunk would
    /// end the body).
    static func chunk(_ data: some Collection<UInt8>) -> [UInt8] {
        guard !data.isEmpty else { return [] }
        var bytes = Array(String(data.count, radix: 16).utf8) + [HeadSyntax.cr, HeadSyntax.lf]
        bytes.append(contentsOf: data)
        bytes.append(contentsOf: [HeadSyntax.cr, HeadSyntax.lf])
        return bytes
    }

    /// The last chunk, the trailer fields, and the final CRLF.
    static func end(trailers: HeaderFields) -> [UInt8] {
        Array("0\r\n".utf8) + trailers.wireBytes + [HeadSyntax.cr, HeadSyntax.lf]
    }
}
