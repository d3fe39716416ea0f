import HostPin
import HostPinNet

extension MetricsEndpoint {
    /// Where a ``MetricsEndpoint`` listens and how long it waits. Loopback only unless
    /// ``allowRemote``.
    public struct Configuration: Sendable {
        /// Where to listen; port 0 picks a free port (read it from ``MetricsEndpoint/start()``).
        public var listenAddress: SocketAddress
        /// Allow a listening address that is not loopback, so other hosts can scrape it. Default: false.
        public var allowRemote = false
        /// How long a client may take to send a whole request head: from the connection's opening, or
        /// from the first byte of a later request's head; then it is answered 408 and closed. Default: 10
        /// seconds.
        public var requestHeadTimeout: Duration = .seconds(10)
        /// How long a kept-alive connection may wait for its next request before it is closed. Default:
        /// 90 seconds (longer than the usual scrape interval, so a scraper keeps its connection).
        public var idleTimeout: Duration = .seconds(90)
        /// The most connections served at once; one beyond it is answered 503 and closed. Default: 256.
        public var maximumConnections = 256
        /// Size limits on a request head: a scrape's head is a few hundred bytes. Default: 16 KiB in all,
        /// 4 KiB per line, 32 field lines.
        public var headLimits: HeadLimits = {
            var limits = HeadLimits()
            limits.maximumHeadBytes = 16_384
            limits.maximumStartLineBytes = 4096
            limits.maximumFieldLineBytes = 4096
            limits.maximumFieldCount = 32
            return limits
        }()

        /// An endpoint on `listenAddress` with the defaults above.
        public init(listenAddress: SocketAddress) {
            self.listenAddress = listenAddress
        }
    }
}
