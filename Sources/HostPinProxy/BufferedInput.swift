import HostPinNet
import Synchronization

/// The reading side of a socket with a buffer, so bytes read past a message head or body (the next
/// pipelined request, the start of a TLS handshake after CONNECT) are kept for whoever reads next.
final class BufferedInput: Sendable {
    /// Why a head could not be read.
    enum HeadFailure: Error, Sendable {
        /// The head broke a rule of RFC 9112 or a limit.
        case head(HeadError)
        /// The socket failed or the deadline passed.
        case socket(SocketError)
        /// The peer closed the connection in the middle of a head.
        case truncated
    }

    /// The socket read from.
    let channel: SocketChannel
    /// Guards bytes received but not yet consumed (one reader at a time uses them; the lock makes the
    /// hand-over between the connection's tasks safe).
    private let pending = Mutex<[UInt8]>([])

    init(channel: SocketChannel) {
        self.channel = channel
    }

    /// Reads one complete head, checking lines and limits as bytes arrive.
    ///
    /// - Parameters:
    ///   - limits: The size limits.
    ///   - deadline: When to give up waiting for the whole head.
    ///   - skippingEmptyLines: Ignore CRLFs before the start line (RFC 9112 §2.2 asks servers to).
    /// - Returns: The head, CRLF CRLF included; `nil` when the peer closed before sending a byte.
    /// - Throws: ``HeadFailure``.
    func readHead(limits: HeadLimits, deadline: ContinuousClock.Instant, skippingEmptyLines: Bool) async throws(HeadFailure) -> [UInt8]? {
        var buffer = take()
        while true {
            if skippingEmptyLines {
                while buffer.count >= 2, buffer[0] == HeadSyntax.cr, buffer[1] == HeadSyntax.lf {
                    buffer.removeFirst(2)
                }
            }
            let end: Int?
            do throws(HeadError) {
                end = try HeadSyntax.endOfHead(in: buffer, limits: limits)
            } catch {
                throw .head(error)
            }
            if let end {
                put(Array(buffer[end...]))
                return Array(buffer[..<end])
            }
            let more: [UInt8]
            do throws(SocketError) {
                more = try await channel.read(deadline: deadline)
            } catch {
                throw .socket(error)
            }
            if more.isEmpty {
                if buffer.isEmpty { return nil }
                throw .truncated
            }
            // Usually the whole head comes in one read: take that array rather than copy it.
            if buffer.isEmpty { buffer = more } else { buffer.append(contentsOf: more) }
        }
    }

    /// The next bytes: buffered ones first, else up to `maximum` from the socket; empty at end of stream.
    func next(maximum: Int = 65_536, deadline: ContinuousClock.Instant?) async throws(SocketError) -> [UInt8] {
        let buffered = take()
        if !buffered.isEmpty {
            if buffered.count <= maximum { return buffered }
            put(Array(buffered[maximum...]))
            return Array(buffered[..<maximum])
        }
        return try await channel.read(maximum: maximum, deadline: deadline)
    }

    /// Waits until at least one byte is buffered, reading from the socket if none is.
    ///
    /// - Returns: `false` at end of stream, when the deadline passes, or when the socket fails or is shut down.
    func awaitBytes(deadline: ContinuousClock.Instant) async -> Bool {
        if hasBuffered { return true }
        guard let bytes = try? await channel.read(deadline: deadline), !bytes.isEmpty else { return false }
        put(bytes)
        return true
    }

    /// Puts `bytes` back in front of anything buffered.
    func unread(_ bytes: some Collection<UInt8>) {
        guard !bytes.isEmpty else { return }
        pending.withLock { $0.insert(contentsOf: bytes, at: 0) }
    }

    /// Whether bytes are buffered (read from the socket but not consumed).
    var hasBuffered: Bool {
        pending.withLock { !$0.isEmpty }
    }

    /// Takes every buffered byte.
    func take() -> [UInt8] {
        pending.withLock { pending in
            defer { pending = [] }
            return pending
        }
    }

    private func put(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        pending.withLock { $0 = $0.isEmpty ? bytes : bytes + $0 }  // no new array when nothing is buffered
    }
}
