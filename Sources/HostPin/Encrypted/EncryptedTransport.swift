import Synchronization

/// Carries DNS messages to one encrypted upstream and brings back its replies: the bytes of a whole
/// query in, the bytes of a whole reply out. Building queries and reading replies is the caller's work.
///
/// Safe to call from many tasks at once; a call never blocks its thread (each transport has a thread
/// of its own that does the I/O).
public protocol EncryptedTransport: AnyObject, Sendable {
    /// The upstream this transport reaches.
    var upstream: EncryptedUpstream { get }

    /// The TLS connections this transport has opened so far, one handshake each (counted when the
    /// connection is attempted, whether or not the handshake then succeeds). Connections are kept and
    /// reused, so this stays far below the number of exchanges.
    var handshakes: Int { get }

    /// Sends `query` and waits for the reply to it.
    ///
    /// - Parameters:
    ///   - query: A whole DNS message (RFC 1035 §4.1), 12 to 65 535 octets. DoT may send it with another
    ///     message ID, and restores the query's own ID in the reply.
    ///   - timeout: The whole exchange's budget, connecting included.
    /// - Returns: The reply's bytes: a DNS message of 12 to 65 535 octets, with the query's message ID
    ///   (for DoH, as the server sent it). Or the ``EncryptedTransportFailure`` that stopped it:
    ///   `.cancelled` at once when the calling task is cancelled.
    func exchange(_ query: [UInt8], timeout: Duration) async -> EncryptedExchangeResult

    /// Closes the kept connection(s) at once, from the transport's own thread (a network change: they
    /// were made on the old path); exchanges in flight on them fail with
    /// ``EncryptedTransportFailure/connectionClosed``, and the next exchange connects again.
    func closeConnections()
}

extension EncryptedTransport {
    /// A transport that keeps no connection has none to close.
    public func closeConnections() {}
}

extension EncryptedUpstream {
    /// A transport to this upstream: ``DoHTransport`` for `https://`, ``DoTTransport`` for `tls://`.
    /// Each opens its connection at the first exchange and keeps it; make one per upstream and share it.
    public func makeTransport() -> any EncryptedTransport {
        switch transport {
        case .https(let path): DoHTransport(upstream: self, path: path)
        case .tls: DoTTransport(upstream: self)
        }
    }

    /// Why nothing can be sent for `query`, checked before it reaches a transport's thread.
    func refusal(of query: [UInt8]) -> EncryptedTransportFailure? {
        if query.count < 12 || query.count > DoHExchange.maximumMessageLength { return .badQuery(octets: query.count) }
        if connectAddresses.isEmpty { return .noBootstrapAddress(name) }
        return nil
    }
}

/// A transport's handshake count, shared between its thread (which adds) and readers.
final class HandshakeCounter: Sendable {
    private let count = Atomic<Int>(0)

    func add(_ connections: Int) {
        if connections > 0 { count.add(connections, ordering: .relaxed) }
    }

    var value: Int { count.load(ordering: .relaxed) }
}
