import Foundation
import Synchronization

/// The second level under a ``CachingResolver``'s memory: answers that any instance of a fleet received
/// from its trusted upstreams, kept in a store they share (Redis), so that a new instance starts warm and
/// the upstreams see each name once per fleet rather than once per instance.
///
/// On a miss in memory the resolver asks ``lookup(_:family:reply:)`` and waits at most ``patience``
/// (20 ms by default) before asking its upstreams too; the first valid answer wins. Each answer an
/// upstream gives (addresses, or NXDOMAIN and NODATA with their SOA) is written with ``keep(_:family:lifetime:)``.
/// Values are keyed by ``SharedCacheKey`` and authenticated by ``SharedCacheValue``'s HMAC under the
/// fleet's ``SharedCacheSecret``, which covers the writer's ``SharedCachePolicy``: a store others can
/// write to cannot poison the instances, a value cannot be replayed under another name, and a writer that
/// does not validate cannot feed readers that do. Never written: failures (SERVFAIL, timeouts), bogus
/// answers, answers with a lifetime of 0, the untrusted fallback's. A hit in memory never reaches it.
public final class SharedCache: Sendable {
    /// Where the values live.
    public let store: any SharedCacheStore
    /// The fleet's secret.
    public let secret: SharedCacheSecret
    /// How long a miss waits for the store before the upstreams are asked too: 20 ms by default.
    public let patience: Duration
    /// Lookups, writes and their latency.
    public let metrics: SharedCacheMetrics
    private let currentPolicy: Mutex<SharedCachePolicy>
    /// Runs the patience deadlines.
    let timer: DeadlineTimer

    /// A shared cache in `store`, written and read under `policy`; its metrics are `metrics`, or new ones
    /// reporting `store`'s connection.
    public init(store: any SharedCacheStore, secret: SharedCacheSecret, policy: SharedCachePolicy,
                patience: Duration = .milliseconds(20), metrics: SharedCacheMetrics? = nil) {
        self.store = store
        self.secret = secret
        self.patience = patience
        self.metrics = metrics ?? SharedCacheMetrics(store: store)
        currentPolicy = Mutex(policy)
        timer = DeadlineTimer(name: "hostpin-shared-cache-timer")
    }

    /// The policy values are written and read under now.
    public var policy: SharedCachePolicy { currentPolicy.withLock { $0 } }

    /// Puts `policy` in force (a reload changed the DNSSEC mode or the upstreams): values written under
    /// the old one are no longer read.
    public func update(policy: SharedCachePolicy) {
        currentPolicy.withLock { $0 = policy }
    }

    /// Asks the store for `name` and `family`; `reply` gets the answer (source
    /// ``Resolution/Source/sharedCache``, TTLs counted down to now) or `nil` for anything else — absent, a
    /// failure, a value that fails its tag, another policy's, expired — on the store's thread; `arrived`
    /// is called first, once the store's reply is in (``SharedCacheStore/get(_:arrived:reply:)``). The
    /// latency counted is the store's, up to `arrived`.
    public func lookup(_ name: HostName, family: AddressFamily, arrived: @escaping @Sendable () -> Void = {},
                       reply: @escaping @Sendable (ResolutionOutcome.Answer?) -> Void) {
        let key = SharedCacheKey(name: name, family: family, secret: secret)
        let policy = policy
        let asked = Self.microsecondsNow()
        let arrival = Atomic<UInt64>(0)
        store.get(key.text, arrived: {
            arrival.store(Self.microsecondsNow(), ordering: .relaxed)
            arrived()
        }) { [secret, metrics] stored in
            let answered = Self.microsecondsNow()
            let arrivedAt = arrival.load(ordering: .relaxed)
            let end = arrivedAt == 0 ? answered : arrivedAt
            let elapsed = end > asked ? end - asked : 0
            switch stored {
            case .absent:
                metrics.record(.miss, microseconds: elapsed)
                return reply(nil)
            case .failed:
                metrics.record(.error, microseconds: elapsed)
                return reply(nil)
            case .value(let bytes):
                let value: SharedCacheValue
                do throws(SharedCacheValue.Rejection) {
                    value = try SharedCacheValue.open(bytes, key: key, secret: secret, policy: policy, now: answered / 1_000_000)
                } catch {
                    metrics.record(error == .badTag ? .badTag : .rejected, microseconds: elapsed)
                    return reply(nil)
                }
                let ageMilliseconds = answered / 1000 > value.receivedAt ? answered / 1000 - value.receivedAt : 0
                let answer = SharedCacheAnswer.answer(
                    from: value.wire, name: name, family: family, age: UInt32(clamping: ageMilliseconds / 1000),
                    receivedAt: Date(timeIntervalSince1970: Double(value.receivedAt) / 1000), dnssec: value.dnssec)
                metrics.record(answer == nil ? .rejected : .hit, microseconds: elapsed)
                reply(answer)
            }
        }
    }

    /// Writes `outcome`, an answer an upstream just gave for `family`, for `lifetime` seconds (the memory
    /// cache's lifetime for it); nothing for a lifetime of 0, an answer not from a trusted upstream, a
    /// bogus one, or a negative answer without an SOA record.
    public func keep(_ outcome: ResolutionOutcome, family: AddressFamily, lifetime: UInt32) {
        guard lifetime > 0, outcome.source == .upstream else { return }
        let name: HostName, receivedAt: Date, dnssec: DNSSECStatus?
        switch outcome.answer {
        case .addresses(let resolution):
            (name, receivedAt, dnssec) = (resolution.name, resolution.receivedAt, resolution.dnssec)
        case .negative(let negative):
            guard negative.soa != nil else { return }
            (name, receivedAt, dnssec) = (negative.name, negative.receivedAt, negative.dnssec)
        }
        if case .bogus = dnssec { return }
        guard let wire = SharedCacheAnswer.wire(of: outcome.answer, family: family) else { return }
        let received = UInt64(max(0, receivedAt.timeIntervalSince1970 * 1000))
        let value = SharedCacheValue(wire: wire, expiresAt: received / 1000 + UInt64(lifetime), receivedAt: received,
                                     dnssec: dnssec, policy: policy)
        let key = SharedCacheKey(name: name, family: family, secret: secret)
        guard let sealed = value.sealed(key: key, secret: secret) else { return }
        metrics.recordWrite()
        store.set(key.text, value: sealed, seconds: lifetime)
    }

    /// Wall-clock microseconds since 1970: expiries are absolute, shared by every instance.
    static func microsecondsNow() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec / 1000)
    }
}
