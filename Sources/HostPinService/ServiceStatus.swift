import HostPin
import HostPinDNS
import Synchronization

/// What the control socket's thread reads and does to a running ``Service``: the parts that live as long
/// as the process (the cache, the upstream switch, the start), and a snapshot of the rest, which the
/// service replaces when a reload changes it.
package final class ServiceStatus: Sendable {
    /// What a reload may change.
    package struct Snapshot: Sendable {
        /// The stub's responder, whose forwarded replies a flush drops; `nil` for `proxy`.
        package var responder: DNSResponder?
        /// The DNS listeners' addresses, as bound.
        package var dnsListeners: [String]
        /// The proxy's address, as bound.
        package var proxy: String?
        /// Reloads applied since the start.
        package var reloads: Int
        /// What `status` answers (the status page's data); `nil` before the start has made it.
        package var metrics: ServiceMetrics? = nil
    }

    package let cache: CachingResolver
    package let upstream: UpstreamSwitch
    private let started = ContinuousClock.now
    private let snapshot: Mutex<Snapshot>

    package init(cache: CachingResolver, upstream: UpstreamSwitch, snapshot: Snapshot) {
        self.cache = cache
        self.upstream = upstream
        self.snapshot = Mutex(snapshot)
    }

    /// Replaces the snapshot (at start, and after each reload).
    package func update(_ new: Snapshot) {
        snapshot.withLock { $0 = new }
    }

    /// The reply to `request` (README.md, "Control socket").
    package func answer(_ request: ControlRequest) -> JSONValue {
        let snapshot = snapshot.withLock { $0 }
        switch request {
        case .flush(let name):
            cache.cache.remove(name)
            snapshot.responder?.removeForwardedReplies(for: name)
            return .object(["flushed": .string(name.text)])
        case .flushAll:
            let entries = cache.cache.count
            cache.cache.removeAll()
            snapshot.responder?.removeForwardedReplies()
            return .object(["flushed": .string("all"), "entries": .number(Double(entries))])
        case .stats:
            let statistics = cache.cache.statistics
            let counters: [String: Int] = ["entries": statistics.entries, "hits": statistics.hits, "negativeHits": statistics.negativeHits,
                                           "misses": statistics.misses, "staleServed": statistics.staleServed,
                                           "refreshes": statistics.refreshes]
            return .object([
                "cache": .object(counters.mapValues { .number(Double($0)) }),
                "reloads": .number(Double(snapshot.reloads)),
                "uptimeSeconds": .number(Double((ContinuousClock.now - started).components.seconds)),
                "listeners": .object(["dns": .array(snapshot.dnsListeners.map { .string($0) }),
                                      "proxy": snapshot.proxy.map { .string($0) } ?? .null]),
                "upstreams": .number(Double(upstream.current.configuration.upstreams.count)),
            ])
        case .status:
            // The same document as the status page's /status.json, plus what only the control socket knows.
            guard case .object(var fields)? = snapshot.metrics?.status() else {
                return .object(["error": .string("the service is starting")])
            }
            fields["reloads"] = .number(Double(snapshot.reloads))
            fields["listeners"] = .object(["dns": .array(snapshot.dnsListeners.map { .string($0) }),
                                           "proxy": snapshot.proxy.map { .string($0) } ?? .null])
            return .object(fields)
        case .upstreams:
            // The default list, then each route's upstreams with the route's domains (split DNS).
            let current = upstream.current
            let lists = [(nil, current.health)] + current.routed.map { route, routed in
                (route.domains.map(\.text).joined(separator: ","), routed.health)
            }
            return .object(["upstreams": .array(lists.flatMap { route, health in health.upstreams.map { upstream in
                var fields: [String: JSONValue] = ["upstream": .string(upstream.description)]
                if let route { fields["route"] = .string(route) }
                switch health.status(of: upstream) {
                case .healthy?, nil:
                    fields["status"] = .string("healthy")
                case .heldDown(let failures, let remaining)?:
                    fields["status"] = .string("held-down")
                    fields["failures"] = .number(Double(failures))
                    fields["remainingSeconds"] = .number(Double(remaining.components.seconds)
                                                         + Double(remaining.components.attoseconds / 1_000_000_000_000_000) / 1000)
                case .probing(let failures)?:
                    fields["status"] = .string("probing")
                    fields["failures"] = .number(Double(failures))
                }
                return .object(fields)
            } })])
        }
    }
}
