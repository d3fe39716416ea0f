import Foundation
import HostPin
import HostPinNet

/// The stub on one UDP socket: a thread of its own receives datagrams one after another, blocking, and
/// answers at once those that wait for nothing (cache hits, rules, refusals:
/// ``DNSResponder/prepare(_:over:)``); each of the others gets a task of its own, so a query waiting for
/// an upstream does not hold back the cache hits behind it.
///
/// A thread rather than a task: a task that receives from a busy socket finds a datagram waiting nearly
/// every time, so it never suspends and holds one of the cooperative pool's threads (two here) away
/// from every other task of the process; and a socket on the ``EventLoop`` wakes the loop's thread for
/// every datagram in and out. One thread per listening socket bounds them.
final class UDPService: Sendable {
    let socket: BlockingDatagramSocket
    private let responder: DNSResponder
    /// Shared by every UDP socket of the server: queries being answered, and the most allowed.
    private let inFlight: QueryCount
    /// Shared by every UDP socket of the server: `nil` when queries are not rate-limited.
    private let limiter: RateLimiter?

    init(socket: BlockingDatagramSocket, responder: DNSResponder, inFlight: QueryCount, limiter: RateLimiter?) {
        self.socket = socket
        self.responder = responder
        self.inFlight = inFlight
        self.limiter = limiter
    }

    /// A query that waits for an upstream, handed from the receiving thread to ``run()``.
    private struct Waiting: Sendable {
        let prepared: PreparedResponse
        let source: SocketAddress
    }

    /// Answers queries until the socket is shut down or the task cancelled, waits for the answers in
    /// flight (cancelled with it) and for the receiving thread to end, then closes the socket.
    func run() async {
        let (waiting, handOver) = AsyncStream.makeStream(of: Waiting.self)
        let thread = Thread { [self] in
            receive(handingOver: handOver)
            handOver.finish()
        }
        thread.name = "hostpin-udp"
        thread.start()
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                // Ends when the thread has ended: the socket was shut down.
                for await query in waiting {
                    group.addTask { [socket, responder, inFlight] in
                        defer { if inFlight.leave() { HeapTrim.afterBurst() } }
                        guard let response = responder.counted(await responder.finishOnCallbacks(query.prepared, over: .udp), over: .udp)
                        else { return }
                        _ = try? socket.send(response, to: query.source)
                    }
                }
            }
        } onCancel: {
            socket.shutdown()
        }
        socket.close()
    }

    /// The receiving thread's loop, until the socket is shut down: answers what waits for nothing and
    /// hands the rest over (each counted in ``inFlight``). Datagrams come in batches (those already
    /// waiting when the thread asks) and the batch's answers leave together: a system call each way per
    /// burst rather than per query.
    private func receive(handingOver handOver: AsyncStream<Waiting>.Continuation) {
        let batch = DatagramBatch()
        var answers: [(bytes: [UInt8], destination: SocketAddress)] = []
        answers.reserveCapacity(batch.capacity)
        while true {
            let datagrams: [Datagram]
            do throws(SocketError) {
                datagrams = try socket.receive(into: batch)
            } catch {
                guard case .system = error else { return }  // shut down: the server is stopping
                // Out of memory or buffers: not the client's doing, and retrying at once would spin.
                usleep(100_000)
                continue
            }
            for datagram in datagrams {
                if let limiter, !limiter.admit(datagram.source.address) {
                    responder.metrics?.record(.other, .rateLimited, over: .udp)
                    continue
                }
                let prepared = responder.prepare(datagram.bytes, over: .udp)
                if case .ready(let reply) = prepared {
                    if let response = responder.counted(reply, over: .udp) { answers.append((response, datagram.source)) }
                    continue
                }
                guard inFlight.enter() else {
                    responder.metrics?.record(.other, .overloaded, over: .udp)
                    continue
                }
                if case .terminated = handOver.yield(Waiting(prepared: prepared, source: datagram.source)) { inFlight.leave() }
            }
            // A full send buffer drops answers, as a lossy network would; the clients ask again.
            guard !answers.isEmpty else { continue }
            do throws(SocketError) { try socket.send(answers, using: batch) } catch { return }
            answers.removeAll(keepingCapacity: true)
        }
    }
}
