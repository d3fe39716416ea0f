import HostPin
import HostPinNet

extension DNSServer {
    /// Where and how a ``DNSServer`` listens. Safe by default: loopback only, so no other host can use
    /// the stub (an open resolver is an amplifier for anyone who spoofs a victim's address).
    public struct Configuration: Sendable {
        /// The addresses to listen on, each over UDP and TCP on the same port; port 0 picks a free one
        /// (read it from ``DNSServer/start()``). Default: `127.0.0.1:53`.
        public var listenAddresses = [SocketAddress(address: .loopbackV4, port: 53)]
        /// Allow listening addresses that are not loopback, so other hosts can query the stub; their UDP
        /// queries are then rate-limited per source (``remoteRateLimit``). Default: false.
        public var allowRemote = false
        /// The UDP rate limit per source when ``allowRemote`` is set. Default: 100 queries per second,
        /// bursts of 200.
        public var remoteRateLimit = RateLimit(queriesPerSecond: 100, burst: 200)
        /// How long a TCP connection may take to deliver its next whole query before it is closed
        /// (RFC 7766 §6.2.3); answers still in flight are sent first. Default: 10 seconds.
        public var tcpIdleTimeout: Duration = .seconds(10)
        /// The most TCP connections served at once; one more is closed as soon as it is accepted.
        /// Default: 1024 (each holds one descriptor).
        public var maximumTCPConnections = 1024
        /// The most queries of one TCP connection resolved at once (RFC 7766 §6.2.1.1, pipelining);
        /// the connection is read again when one is answered. Default: 32.
        public var maximumQueriesPerConnection = 32
        /// The most UDP queries waiting for an upstream at once, over all addresses; more are dropped
        /// (the client asks again). Cache hits wait for nothing and are answered as they are received.
        /// Default: 4096.
        public var maximumUDPQueries = 4096
        /// Called with a one-line message when the server meets a problem no answer shows: running out
        /// of file descriptors (once per episode). Default: `nil`, nothing is said.
        public var diagnosticLog: (@Sendable (String) -> Void)?

        /// The defaults above.
        public init() {}
    }

    /// A token bucket per client (an IPv4 address, or an IPv6 /64): it holds at most `burst` queries
    /// and refills at `queriesPerSecond`; a query that finds it empty is dropped unanswered.
    public struct RateLimit: Sendable, Hashable {
        /// The sustained rate, queries per second.
        public var queriesPerSecond: Double
        /// The most queries answered in a burst.
        public var burst: Double

        public init(queriesPerSecond: Double, burst: Double) {
            self.queriesPerSecond = queriesPerSecond
            self.burst = burst
        }
    }
}
