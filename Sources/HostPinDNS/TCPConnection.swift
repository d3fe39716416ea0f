import HostPinNet

/// One client's TCP connection (RFC 7766): queries are read one after another and answered as each is
/// ready, so a slow name does not hold back the answers behind it (§6.2.1.1, pipelining; clients match
/// answers to queries by ID).
///
/// Two kinds of child task report to the connection's loop: a reader (at most one, reading the next
/// whole message) and one per query being answered; the loop alone writes, so writes never interleave. The reader is started again only while fewer than `maximumInFlight` queries are
/// being answered, so a client that sends faster than it reads is held back by TCP itself, and the
/// connection holds at most one partial message besides those queries.
struct TCPConnection: Sendable {
    let channel: SocketChannel
    let responder: DNSResponder
    /// How long the next whole message may take to arrive, from when the reader starts waiting for it.
    let idleTimeout: Duration
    let maximumInFlight: Int

    private enum Event: Sendable {
        /// The reader has a whole message, and the bytes received after it.
        case message([UInt8], TCPFrames)
        /// The reader stopped: end of stream, the idle timeout, an error, or the server stopping.
        case ended
        /// A query's response (`nil`: none is sent).
        case response([UInt8]?)
    }

    /// Serves the connection until the client closes it, goes idle, or the server stops; closes it.
    func run() async {
        await withTaskGroup(of: Event.self) { group in
            group.addTask { await read(into: TCPFrames()) }
            var reading = true
            var inFlight = 0
            var heldBack: TCPFrames?
            while let event = await group.next() {
                switch event {
                case .message(let message, let rest):
                    reading = false
                    inFlight += 1
                    group.addTask { .response(await responder.respond(to: message, over: .tcp)) }
                    heldBack = rest
                case .ended:
                    reading = false
                case .response(let response):
                    inFlight -= 1
                    guard let response else { break }
                    do throws(SocketError) {
                        try await channel.write(TCPFrames.frame(response), deadline: .after(idleTimeout))
                    } catch {
                        // The client does not read its answers: give up on the others too.
                        heldBack = nil
                        channel.shutdown()
                        group.cancelAll()
                    }
                }
                if !reading, inFlight < maximumInFlight, let frames = heldBack {
                    heldBack = nil
                    reading = true
                    group.addTask { await read(into: frames) }
                }
            }
        }
        channel.close()
    }

    /// Reads until `frames` holds a whole message, within the idle timeout.
    private func read(into frames: TCPFrames) async -> Event {
        var frames = frames
        let deadline = ContinuousClock.Instant.after(idleTimeout)
        while true {
            if let message = frames.next() { return .message(message, frames) }
            do throws(SocketError) {
                let bytes = try await channel.read(maximum: 16_384, deadline: deadline)
                if bytes.isEmpty { return .ended }
                frames.append(bytes)
            } catch {
                return .ended
            }
        }
    }
}
