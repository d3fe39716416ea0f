import Foundation
import HostPinNet
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// ``SocketChannel`` on a real loopback TCP connection: a read after one that drained the socket waits
/// for the loop's edge instead of calling `recv` first, and must still see every byte and the peer's FIN.
@Suite struct SocketChannelTests {
    /// Bytes and the FIN arrive together and the loop reports them as one edge before the first read:
    /// the read that takes the bytes is short (the socket looks drained), yet no further edge will come.
    /// The next read must return end of stream at once, not wait for its deadline.
    @Test func endOfStreamThatCameWithTheLastBytesIsReadWithoutAnotherEdge() async throws {
        let (channel, peer) = try Self.connectedPair()
        defer { close(peer) }
        #expect(send(peer, "hello", 5, Int32(MSG_NOSIGNAL)) == 5)
        shutdown(peer, Int32(SHUT_WR))
        try await Task.sleep(for: .milliseconds(100))  // the loop reports the edge meanwhile
        let deadline = ContinuousClock.Instant.after(.seconds(5))
        #expect(try await channel.read(deadline: deadline) == Array("hello".utf8))
        #expect(try await channel.read(deadline: deadline) == [])
        #expect(ContinuousClock.now < deadline)
        channel.close()
    }

    /// A byte sent after a read drained the socket reaches the next read through the loop's edge.
    @Test func bytesAfterADrainingReadWakeTheNextRead() async throws {
        let (channel, peer) = try Self.connectedPair()
        defer { close(peer) }
        let deadline = ContinuousClock.Instant.after(.seconds(5))
        for round in 0..<20 {
            let byte = UInt8(ascii: "a") + UInt8(round)
            let later = Task.detached {
                try await Task.sleep(for: .milliseconds(round % 2 == 0 ? 0 : 20))
                var copy = byte
                _ = send(peer, &copy, 1, Int32(MSG_NOSIGNAL))
            }
            #expect(try await channel.read(deadline: deadline) == [byte])
            try await later.value
        }
        channel.close()
    }

    /// An idle connection whose peer has sent its FIN is not quiet, even when the edges are trusted.
    @Test func aConnectionClosedByItsPeerIsNotQuiet() async throws {
        let (channel, peer) = try Self.connectedPair()
        #expect(send(peer, "x", 1, Int32(MSG_NOSIGNAL)) == 1)
        #expect(try await channel.read(deadline: .after(.seconds(5))) == Array("x".utf8))
        #expect(channel.isQuiet(trustingEdges: true))
        close(peer)
        try await Task.sleep(for: .milliseconds(100))  // the loop reports the FIN meanwhile
        #expect(!channel.isQuiet(trustingEdges: true))
        #expect(!channel.isQuiet())
        channel.close()
    }

    /// A ``SocketChannel`` on one end of a loopback TCP connection, and the other end's descriptor.
    private static func connectedPair() throws -> (SocketChannel, Int32) {
        let (listener, port) = try TestSockets.bindLoopback(listening: true)
        defer { close(listener) }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        // Loopback: the handshake completes within connect, and accept finds the connection queued.
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let accepted = accept(listener, nil, nil)
        guard connected == 0, accepted >= 0 else {
            close(client)
            throw TestSockets.Failure(description: "no loopback connection")
        }
        return (try SocketChannel(descriptor: accepted, peer: nil), client)
    }
}
