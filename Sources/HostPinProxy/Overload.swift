import HostPinNet

/// Refusing a connection accepted beyond ``ForwardProxy/Configuration/maximumConnections``: `503 Service
/// Unavailable` at once, before any request is read, then a lingering close.
enum Overload {
    /// How long a refused connection may take to receive the 503 and close its side. Meanwhile what the
    /// client sends (its request) is read and discarded: closing a socket with unread bytes sends a
    /// reset, which can destroy the 503 before the client reads it.
    static let linger = Duration.seconds(1)
    /// The most bytes read and discarded before closing anyway.
    static let discardLimit = 65_536

    /// Answers 503 on `channel`, logs it, and closes the connection within ``linger``; runs on a task
    /// of its own (not counted among the proxy's connections), so the caller does not wait.
    static func refuse(_ channel: SocketChannel, configuration: ForwardProxy.Configuration) {
        let started = ContinuousClock.now
        let when = AccessLogEntry.now()
        let error = ProxyError.overloaded(maximumConnections: configuration.maximumConnections)
        Task {
            let deadline = ContinuousClock.Instant.after(linger)
            try? await channel.write(error.response(via: configuration.viaPseudonym), deadline: deadline)
            channel.shutdownWrite()
            var discarded = 0
            while discarded < discardLimit, let bytes = try? await channel.read(deadline: deadline), !bytes.isEmpty {
                discarded += bytes.count
            }
            channel.close()
            configuration.accessLog?(AccessLogEntry(unixSeconds: when.unixSeconds, nanoseconds: when.nanoseconds,
                                                    client: channel.peer, method: "-", target: "-", pinned: nil,
                                                    status: error.status, bytes: 0, duration: ContinuousClock.now - started,
                                                    rules: [], source: nil))
        }
    }
}
