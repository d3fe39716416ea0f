import HostPinNet

/// Copies one message body from a buffered input to a socket as it arrives, never holding more than
/// one read (64 KiB) in memory, decoding and re-encoding the chunked coding where the two hops differ.
enum BodyRelay {
    /// How the body is written on the outgoing hop.
    enum OutputCoding: Sendable {
        /// As the bytes themselves (with `Content-Length`, or until the connection closes).
        case identity
        /// Chunked (RFC 9112 §7.1).
        case chunked
    }

    /// Why a body could not be relayed.
    enum Failure: Error, Sendable {
        /// Reading the incoming side failed or timed out.
        case read(SocketError)
        /// Writing the outgoing side failed or timed out.
        case write(SocketError)
        /// The incoming side closed before the body's end.
        case truncated
        /// The incoming chunked coding is malformed.
        case malformedChunk(ChunkError)
    }

    /// Relays a body framed as `framing` from `input` to `output`.
    ///
    /// - Parameters:
    ///   - idle: The longest wait for one read or write.
    ///   - removingTrailers: Trailer field names (lower case) dropped when re-encoding chunked.
    ///   - counter: Where the body's bytes (decoded) are counted once written; `nil` for nowhere.
    /// - Returns: The body's length in bytes (decoded).
    /// - Throws: ``Failure``.
    static func relay(_ framing: BodyFraming, from input: BufferedInput, to output: SocketChannel,
                      coding: OutputCoding, idle: Duration, removingTrailers: Set<String> = [],
                      counter: RelayCounter? = nil) async throws(Failure) -> UInt64
    {
        switch framing {
        case .none:
            return 0
        case .contentLength(let length):
            var remaining = length
            while remaining > 0 {
                let bytes = try await read(input, maximum: Int(min(remaining, 65_536)), idle: idle)
                if bytes.isEmpty { throw .truncated }
                try await write(bytes, to: output, coding: coding, idle: idle)
                counter?.add(bytes.count)
                remaining -= UInt64(bytes.count)
            }
            if coding == .chunked { try await write(raw: ChunkedEncoder.end(trailers: HeaderFields()), to: output, idle: idle) }
            return length
        case .untilClose:
            var total: UInt64 = 0
            while true {
                let bytes = try await read(input, maximum: 65_536, idle: idle)
                if bytes.isEmpty { break }
                try await write(bytes, to: output, coding: coding, idle: idle)
                counter?.add(bytes.count)
                total += UInt64(bytes.count)
            }
            if coding == .chunked { try await write(raw: ChunkedEncoder.end(trailers: HeaderFields()), to: output, idle: idle) }
            return total
        case .chunked:
            var decoder = ChunkedDecoder()
            var total: UInt64 = 0
            while !decoder.isComplete {
                let bytes = try await read(input, maximum: 65_536, idle: idle)
                if bytes.isEmpty { throw .truncated }
                let decoded: (events: [ChunkedDecoder.Event], consumed: Int)
                do throws(ChunkError) {
                    decoded = try decoder.feed(bytes[...])
                } catch {
                    throw .malformedChunk(error)
                }
                input.unread(bytes[decoded.consumed...])
                var out: [UInt8] = []
                var dataCount = 0
                for event in decoded.events {
                    switch event {
                    case .data(let data):
                        total += UInt64(data.count)
                        dataCount += data.count
                        out.append(contentsOf: coding == .chunked ? ChunkedEncoder.chunk(data) : Array(data))
                    case .end(let trailers):
                        if coding == .chunked {
                            out.append(contentsOf: ChunkedEncoder.end(trailers: HopByHop.removed(from: trailers, alsoRemoving: removingTrailers)))
                        }
                    }
                }
                try await write(raw: out, to: output, idle: idle)
                if dataCount > 0 { counter?.add(dataCount) }
            }
            return total
        }
    }

    private static func read(_ input: BufferedInput, maximum: Int, idle: Duration) async throws(Failure) -> [UInt8] {
        do throws(SocketError) {
            return try await input.next(maximum: maximum, deadline: .after(idle))
        } catch {
            throw .read(error)
        }
    }

    private static func write(_ bytes: [UInt8], to output: SocketChannel, coding: OutputCoding, idle: Duration)
        async throws(Failure)
    {
        try await write(raw: coding == .chunked ? ChunkedEncoder.chunk(bytes) : bytes, to: output, idle: idle)
    }

    private static func write(raw bytes: [UInt8], to output: SocketChannel, idle: Duration) async throws(Failure) {
        guard !bytes.isEmpty else { return }
        do throws(SocketError) {
            try await output.write(bytes, deadline: .after(idle))
        } catch {
            throw .write(error)
        }
    }
}
