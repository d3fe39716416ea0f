import HostPinNet

/// Closing a connection after an error response without destroying that response: the proxy sends its
/// FIN, then reads and discards what the client still sends (its request body) until the client closes
/// its side, ``linger`` passes or ``discardLimit`` bytes were read. Closing a socket with unread bytes
/// sends a reset, which can destroy the response in the client's receive queue before it reads it.
enum LingeringClose {
    /// How long a client may take to receive the response and close its side.
    static let linger = Duration.seconds(1)
    /// The most bytes read and discarded before closing anyway.
    static let discardLimit = 65_536

    /// Half-closes `channel` and drains it (see the type); the caller closes it afterwards.
    static func drain(_ channel: SocketChannel) async {
        channel.shutdownWrite()
        let deadline = ContinuousClock.Instant.after(linger)
        var discarded = 0
        while discarded < discardLimit, let bytes = try? await channel.read(deadline: deadline), !bytes.isEmpty {
            discarded += bytes.count
        }
    }
}
