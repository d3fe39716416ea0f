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
    ///   - leading: Bytes to send before the body (the message's head). When the body's first bytes are
    ///     already buffered they go out together, in one `send`; otherwise at once, so the peer sees the
    ///     head while the body is awaited.
    ///   - idle: The longest wait for one read or write.
    ///   - removingTrailers: Trailer field names (lower case) dropped when re-encoding chunked.
    ///   - counter: Where the body's bytes (decoded) are counted once written; `nil` for nowhere.
    ///   - relayed: Grows by the body's bytes (decoded) as each write completes: the body's length when
    ///     the relay ends, and what got through when it fails (an origin gone mid-body).
    /// - Throws: ``Failure``.
    static func relay(_ framing: BodyFraming, from input: BufferedInput, to output: SocketChannel,
                      coding: OutputCoding, idle: Duration, leading: [UInt8] = [], removingTrailers: Set<String> = [],
                      counter: RelayCounter? = nil, relayed: inout UInt64) async throws(Failure)
    {
        var sink = Sink(channel: output, leading: leading)
        if !input.hasBuffered { try await sink.flush(idle: idle) }
        try await relayBody(framing, from: input, to: &sink, coding: coding, idle: idle,
                            removingTrailers: removingTrailers, counter: counter, relayed: &relayed)
        try await sink.flush(idle: idle)  // a body that was empty after all
    }

    private static func relayBody(_ framing: BodyFraming, from input: BufferedInput, to output: inout Sink,
                                  coding: OutputCoding, idle: Duration, removingTrailers: Set<String>,
                                  counter: RelayCounter?, relayed: inout UInt64) async throws(Failure)
    {
        switch framing {
        case .none:
            return
        case .contentLength(let length):
            var remaining = length
            while remaining > 0 {
                let bytes = try await read(input, maximum: Int(min(remaining, 65_536)), idle: idle)
                if bytes.isEmpty { throw .truncated }
                try await output.write(coding == .chunked ? ChunkedEncoder.chunk(bytes) : bytes, idle: idle)
                counter?.add(bytes.count)
                relayed += UInt64(bytes.count)
                remaining -= UInt64(bytes.count)
            }
            if coding == .chunked { try await output.write(ChunkedEncoder.end(trailers: HeaderFields()), idle: idle) }
        case .untilClose:
            while true {
                let bytes = try await read(input, maximum: 65_536, idle: idle)
                if bytes.isEmpty { break }
                try await output.write(coding == .chunked ? ChunkedEncoder.chunk(bytes) : bytes, idle: idle)
                counter?.add(bytes.count)
                relayed += UInt64(bytes.count)
            }
            if coding == .chunked { try await output.write(ChunkedEncoder.end(trailers: HeaderFields()), idle: idle) }
        case .chunked:
            var decoder = ChunkedDecoder()
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
                        dataCount += data.count
                        out.append(contentsOf: coding == .chunked ? ChunkedEncoder.chunk(data) : Array(data))
                    case .end(let trailers):
                        if coding == .chunked {
                            out.append(contentsOf: ChunkedEncoder.end(trailers: HopByHop.removed(from: trailers, alsoRemoving: removingTrailers)))
                        }
                    }
                }
                try await output.write(out, idle: idle)
                if dataCount > 0 { counter?.add(dataCount) }
                relayed += UInt64(dataCount)
            }
        }
    }

    private static func read(_ input: BufferedInput, maximum: Int, idle: Duration) async throws(Failure) -> [UInt8] {
        do throws(SocketError) {
            return try await input.next(maximum: maximum, deadline: .after(idle))
        } catch {
            throw .read(error)
        }
    }

    /// The outgoing socket, with the bytes still to be sent in front of the next write.
    private struct Sink {
        let channel: SocketChannel
        var leading: [UInt8]

        /// Sends the leading bytes and `bytes`; the leading bytes alone when `bytes` is empty (a read that
        /// gave no body byte yet: the peer must not wait for the head).
        mutating func write(_ bytes: [UInt8], idle: Duration) async throws(Failure) {
            guard !bytes.isEmpty else { return try await flush(idle: idle) }
            let all = leading.isEmpty ? bytes : leading + bytes
            leading = []
            do throws(SocketError) {
                try await channel.write(all, deadline: .after(idle))
            } catch {
                throw .write(error)
            }
        }

        /// Sends the leading bytes alone, if any.
        mutating func flush(idle: Duration) async throws(Failure) {
            let bytes = leading
            leading = []
            do throws(SocketError) {
                if !bytes.isEmpty { try await channel.write(bytes, deadline: .after(idle)) }
            } catch {
                throw .write(error)
            }
        }
    }
}
