import HostPinNet

/// Refusing a connection accepted beyond ``ForwardProxy/Configuration/maximumConnections``: `503 Service
/// Unavailable` at once, before any request is read, then a lingering close.
enum Overload {
    /// Answers 503 on `channel`, logs it, and closes the connection with a ``LingeringClose``; runs on a task
    /// of its own (not counted among the proxy's connections), so the caller does not wait.
    static func refuse(_ channel: SocketChannel, configuration: ForwardProxy.Configuration) {
        let started = ContinuousClock.now
        let when = AccessLogEntry.now()
        let error = ProxyError.overloaded(maximumConnections: configuration.maximumConnections)
        Task {
            try? await channel.write(error.response(via: configuration.viaPseudonym),
                                     deadline: .after(LingeringClose.linger))
            await LingeringClose.drain(channel)
            channel.close()
            configuration.metrics?.recordRequest(.http, status: error.status)
            configuration.accessLog?(AccessLogEntry(unixSeconds: when.unixSeconds, nanoseconds: when.nanoseconds,
                                                    client: channel.peer, method: "-", target: "-", pinned: nil,
                                                    status: error.status, bytes: 0, duration: ContinuousClock.now - started,
                                                    rules: [], source: nil))
        }
    }
}
