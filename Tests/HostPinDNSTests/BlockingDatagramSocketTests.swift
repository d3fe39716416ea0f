import Foundation
import HostPinNet
import Testing

/// The UDP socket the stub's receiving threads block on: a datagram in, one out, and a shutdown that
/// wakes a thread blocked in `recvfrom`.
@Suite struct BlockingDatagramSocketTests {
    /// Runs `body` on a thread of its own (it blocks) and returns what it returns.
    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    @Test func aDatagramIsReceivedWithItsSourceAndAnsweredWithoutWaiting() async throws {
        let server = try BlockingDatagramSocket(binding: SocketAddress("127.0.0.1:0")!)
        defer { server.close() }
        let client = try DatagramSocket(binding: SocketAddress("127.0.0.1:0")!)
        defer {
            client.shutdown()
            client.close()
        }
        try client.send([1, 2, 3], to: server.boundAddress)
        let received = await Self.onThread { () -> Result<Datagram, SocketError> in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: DatagramSocket.maximumDatagram, alignment: 1)
            defer { buffer.deallocate() }
            return Result<Datagram, SocketError>(catching: { () throws(SocketError) -> Datagram in try server.receive(into: buffer) })
        }
        let datagram = try received.get()
        #expect(datagram.bytes == [1, 2, 3] && datagram.source == client.boundAddress)
        #expect(try server.send([4, 5], to: datagram.source))
        #expect(try await client.receive(deadline: .after(.seconds(20))).bytes == [4, 5])
    }

    @Test func shutdownWakesAThreadBlockedInReceive() async throws {
        let server = try BlockingDatagramSocket(binding: SocketAddress("127.0.0.1:0")!)
        defer { server.close() }
        async let outcome = Self.onThread { () -> SocketError? in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: DatagramSocket.maximumDatagram, alignment: 1)
            defer { buffer.deallocate() }
            do throws(SocketError) {
                _ = try server.receive(into: buffer)
                return nil
            } catch {
                return error
            }
        }
        // Give the thread time to block in recvfrom (a shutdown before it gets there must end it too).
        try await Task.sleep(for: .milliseconds(200))
        server.shutdown()
        #expect(await outcome == .closed)
        #expect(throws: SocketError.closed) { try server.send([1], to: server.boundAddress) }
    }
}
