import HostPinNet
@testable import HostPinDNS

/// A plain DNS client for tests: one query over UDP, or several over one TCP connection.
enum DNSClient {
    struct NoAnswer: Error, CustomStringConvertible {
        let description: String
    }

    /// Sends `query` over UDP from a socket of its own and returns the first datagram back, sending it
    /// again every second without an answer, as stub resolvers do (a datagram may be dropped: a full
    /// receive buffer on a loaded machine, the server's rate limit).
    ///
    /// - Throws: ``NoAnswer`` when nothing arrives within `timeout`.
    static func udp(_ query: [UInt8], to server: SocketAddress, timeout: Duration = .seconds(20)) async throws -> [UInt8] {
        let socket = try DatagramSocket(binding: SocketAddress(address: server.address, port: 0))
        defer {
            socket.shutdown()
            socket.close()
        }
        let deadline = ContinuousClock.Instant.after(timeout)
        while ContinuousClock.now < deadline {
            try socket.send(query, to: server)
            if let answer = try await answer(on: socket, to: query, before: min(deadline, .after(.seconds(1)))) { return answer }
        }
        throw NoAnswer(description: "no UDP answer from \(server) within \(timeout)")
    }

    /// The next datagram on `socket` answering `query`, or `nil` when none arrives before `deadline`.
    /// Skips a datagram whose ID is not the query's: a late reply to whoever had this ephemeral port
    /// before (seen with 500 clients at once beside other suites: an empty NOERROR with another ID).
    private static func answer(on socket: DatagramSocket, to query: [UInt8], before deadline: ContinuousClock.Instant)
        async throws -> [UInt8]?
    {
        while let bytes = try await datagram(on: socket, before: deadline) {
            if query.count < 2 || bytes.count < 2 || bytes.prefix(2) == query.prefix(2) { return bytes }
        }
        return nil
    }

    /// The next datagram on `socket`, or `nil` when none arrives before `deadline`.
    private static func datagram(on socket: DatagramSocket, before deadline: ContinuousClock.Instant) async throws -> [UInt8]? {
        do {
            return try await socket.receive(deadline: deadline).bytes
        } catch SocketError.timedOut {
            return nil
        }
    }

    /// Sends every query of `queries` over one TCP connection at once (pipelined), then reads
    /// `queries.count` responses in the order they arrive.
    static func tcp(_ queries: [[UInt8]], to server: SocketAddress, timeout: Duration = .seconds(20)) async throws -> [[UInt8]] {
        let channel = try await SocketChannel.connect(to: server, deadline: .after(timeout))
        defer { channel.close() }
        try await channel.write(queries.flatMap(TCPFrames.frame), deadline: .after(timeout))
        return try await read(queries.count, from: channel, timeout: timeout)
    }

    /// Reads `count` framed responses from `channel`.
    static func read(_ count: Int, from channel: SocketChannel, timeout: Duration = .seconds(20)) async throws -> [[UInt8]] {
        var frames = TCPFrames()
        var responses: [[UInt8]] = []
        let deadline = ContinuousClock.Instant.after(timeout)
        while responses.count < count {
            if let message = frames.next() {
                responses.append(message)
                continue
            }
            let bytes = try await channel.read(deadline: deadline)
            if bytes.isEmpty { throw NoAnswer(description: "the server closed the connection after \(responses.count) of \(count) responses") }
            frames.append(bytes)
        }
        return responses
    }
}
