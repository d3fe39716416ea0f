import HostPin
import Synchronization

/// The server's per-source UDP limit (``DNSServer/RateLimit``): ``TokenBuckets`` behind a lock, shared by
/// every UDP socket of one server.
final class RateLimiter: Sendable {
    /// Guards the buckets, read and refilled by each query's admission.
    private let buckets: Mutex<TokenBuckets>

    init(limit: DNSServer.RateLimit) {
        buckets = Mutex(TokenBuckets(limit: limit))
    }

    /// Whether a query from `address` may be answered now (one token taken when it may).
    func admit(_ address: IPAddress) -> Bool {
        let now = ContinuousClock.now
        return buckets.withLock { $0.admit(address, at: now) }
    }
}
