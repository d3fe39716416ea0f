import Foundation
import HostPinNet
import Testing

/// The UDP socket the stub's receiving threads block on: datagrams in and out in batches
/// (recvmmsg/sendmmsg), and a shutdown that wakes a thread blocked in the receive.
@Suite struct BlockingDatagramSocketTests {
    /// Runs `body` on a thread of its own (it blocks) and returns what it returns.
    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    @Test func aBurstIsReceivedWholeWithItsSourcesAndAnsweredInBatches() async throws {
        let server = try BlockingDatagramSocket(binding: SocketAddress("127.0.0.1:0")!)
        defer { server.close() }
        let client = try DatagramSocket(binding: SocketAddress("127.0.0.1:0")!)
        defer {
            client.shutdown()
            client.close()
        }
        // Ten datagrams, one as large as UDP allows: more than a batch of four holds, so the receive
        // takes several calls and the send several sendmmsg calls.
        let sent: [[UInt8]] = (0..<9).map { [UInt8($0), 1, 2] } + [[UInt8](repeating: 7, count: DatagramSocket.maximumDatagram)]
        for bytes in sent { try client.send(bytes, to: server.boundAddress) }
        let received = await Self.onThread { () -> Result<[Datagram], SocketError> in
            let batch = DatagramBatch(capacity: 4)
            var datagrams: [Datagram] = []
            return Result<[Datagram], SocketError>(catching: { () throws(SocketError) -> [Datagram] in
                while datagrams.count < sent.count { datagrams += try server.receive(into: batch) }
                return datagrams
            })
        }
        let datagrams = try received.get()
        #expect(datagrams.map(\.bytes) == sent)
        #expect(datagrams.allSatisfy { $0.source == client.boundAddress })
        let answers = datagrams.map { (bytes: Array($0.bytes.prefix(2).reversed()), destination: $0.source) }
        try server.send(answers, using: DatagramBatch(capacity: 4))
        for answer in answers {
            #expect(try await client.receive(deadline: .after(.seconds(20))).bytes == answer.bytes)
        }
    }

    @Test func shutdownWakesAThreadBlockedInReceive() async throws {
        let server = try BlockingDatagramSocket(binding: SocketAddress("127.0.0.1:0")!)
        defer { server.close() }
        async let outcome = Self.onThread { () -> SocketError? in
            let batch = DatagramBatch()
            do throws(SocketError) {
                while true { _ = try server.receive(into: batch) }
            } catch {
                return error
            }
        }
        // Give the thread time to block in recvmmsg (a shutdown before it gets there must end it too).
        try await Task.sleep(for: .milliseconds(200))
        server.shutdown()
        #expect(await outcome == .closed)
        #expect(throws: SocketError.closed) { try server.send([1], to: server.boundAddress) }
    }
}
