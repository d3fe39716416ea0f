import HostPin
import HostPinNet

/// The stub on one UDP socket: a task receives datagrams one after another and answers at once those
/// that wait for nothing (cache hits, rules, refusals: ``DNSResponder/prepare(_:over:)``); each of the
/// others gets a child task of its own, so a query waiting for an upstream does not hold back the cache
/// hits behind it. Answering hits in the receiving task spares each a task and two thread hand-offs.
final class UDPService: Sendable {
    let socket: DatagramSocket
    private let responder: DNSResponder
    /// Shared by every UDP socket of the server: queries being answered, and the most allowed.
    private let inFlight: QueryCount
    /// Shared by every UDP socket of the server: `nil` when queries are not rate-limited.
    private let limiter: RateLimiter?

    init(socket: DatagramSocket, responder: DNSResponder, inFlight: QueryCount, limiter: RateLimiter?) {
        self.socket = socket
        self.responder = responder
        self.inFlight = inFlight
        self.limiter = limiter
    }

    /// Datagrams handled between two yields to the other tasks of the cooperative pool.
    static let datagramsPerYield = 32

    /// Answers queries until the socket is shut down or the task cancelled, waits for the answers in
    /// flight (cancelled with it), then closes the socket.
    func run() async {
        // One read buffer for every datagram (see DatagramSocket.receive(deadline:into:)).
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: DatagramSocket.maximumDatagram, alignment: 1)
        defer { buffer.deallocate() }
        await withDiscardingTaskGroup { group in
            var sinceYield = 0
            while true {
                // A receive that finds a datagram waiting does not suspend, and cache hits are answered
                // right here: under a steady stream this loop would keep one of the cooperative pool's
                // threads (two here) for as long as the stream lasts, and every other task of the process
                // (the proxy's connections, in `hostpin serve --listen`) would wait. Seen in CI: proxy
                // tests got no reply for 10 s while a test flooded a stub in the same process.
                sinceYield += 1
                if sinceYield == Self.datagramsPerYield {
                    sinceYield = 0
                    await Task.yield()
                }
                let datagram: Datagram
                do throws(SocketError) {
                    datagram = try await socket.receive(deadline: nil, into: buffer)
                } catch {
                    if case .system = error {
                        // Out of memory or buffers: not the client's doing, and retrying at once would spin.
                        await EventLoop.shared.sleep(until: .after(.milliseconds(100)))
                        continue
                    }
                    return  // closed or cancelled: the server is stopping
                }
                if let limiter, !limiter.admit(datagram.source.address) {
                    responder.metrics?.record(.other, .rateLimited, over: .udp)
                    continue
                }
                let prepared = responder.prepare(datagram.bytes, over: .udp)
                if case .ready(let reply) = prepared {
                    // A full send buffer drops the answer, as a lossy network would; the client asks again.
                    if let response = responder.counted(reply, over: .udp) { _ = try? socket.send(response, to: datagram.source) }
                    continue
                }
                guard inFlight.enter() else {
                    responder.metrics?.record(.other, .overloaded, over: .udp)
                    continue
                }
                group.addTask { [socket, responder, inFlight] in
                    defer { inFlight.leave() }
                    guard let response = responder.counted(await responder.finish(prepared, over: .udp), over: .udp) else { return }
                    _ = try? socket.send(response, to: datagram.source)
                }
            }
        }
        socket.close()
    }
}
