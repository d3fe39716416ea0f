import Foundation

extension ServiceMetrics {
    /// Where the answers counted in ``history`` come from.
    public enum AnswerSource: String, Sendable {
        /// The DNS stub's replies (every outcome it answered; dropped, rate-limited and overloaded
        /// queries got none).
        case dns
        /// The cache's lookups (hits, negative hits, misses): a proxy without a stub, or a stub whose
        /// queries are not counted.
        case cache
    }

    /// The running total of answers and where it comes from: the stub's replies when it is counted,
    /// else the cache's lookups.
    public var answers: (source: AnswerSource, total: UInt64) {
        if let dns {
            var total: UInt64 = 0
            for type in DNSQueryMetrics.QueryType.allCases {
                for outcome in DNSQueryMetrics.Outcome.allCases where ![.dropped, .rateLimited, .overloaded].contains(outcome) {
                    for transport in DNSQueryMetrics.Transport.allCases { total += dns.count(type, outcome, over: transport) }
                }
            }
            return (.dns, total)
        }
        let statistics = cache.statistics
        return (.cache, UInt64(clamping: statistics.hits + statistics.negativeHits + statistics.misses))
    }

    /// Ends the chart's slot in progress (the service calls it every ``AnswerRateHistory/slot``).
    public func sampleAnswers() {
        history.sample(total: answers.total, now: clock.nanoseconds())
    }

    /// Everything the status page shows, as the JSON `/status.json` serves and `hostpin ctl status`
    /// prints (README.md, "Status page", lists each field): uptime and health, answers per second over
    /// the last hour, the stub's answers by outcome, the cache's counters and hit rate, each trusted
    /// upstream's health, round trip and failures, DNSSEC counts, the proxy's requests and refusals, the
    /// watch's counts and its findings, newest first.
    ///
    /// Every count is read from the counters the metrics hold, so the page, the CLI and `/metrics`
    /// agree; what the service does not run (no stub, no proxy, no watch) is `null`.
    public func status() -> JSONValue {
        let now = clock.nanoseconds()
        let resolver = resolver
        let answers = answers
        let health = health
        var fields: [String: JSONValue] = [
            "version": .number(1),
            "uptimeSeconds": .number(Double(now >= started ? (now - started) / 1_000_000_000 : 0)),
            "health": .object(["healthy": .bool(health.isHealthy), "reason": .string(health.reason)]),
            "answers": .object([
                "source": .string(answers.source.rawValue),
                "total": .number(Double(answers.total)),
                "slotSeconds": .number(history.slot.seconds),
                "windowSeconds": .number(history.slot.seconds * Double(history.slotCount)),
                "points": .array(history.points(total: answers.total, now: now).map { point in
                    .object(["secondsAgo": .number((point.secondsAgo * 10).rounded() / 10),
                             "perSecond": .number((point.perSecond * 100).rounded() / 100)])
                }),
            ]),
            "cache": Self.cacheStatus(cache.statistics),
            "upstreams": .array(Self.upstreamStatus(resolver, route: nil) + resolver.routed.flatMap { route, routed in
                Self.upstreamStatus(routed, route: route.domains.map(\.text).joined(separator: ","))
            }),
            "dnssec": Self.dnssecStatus(resolver, dnssec),
            "dns": dns.map(Self.dnsStatus) ?? .null,
            "proxy": proxy.map(Self.proxyStatus) ?? .null,
            "watch": watch.map { Self.watchStatus($0.statistics) } ?? .null,
            "findings": findings.map(Self.findingsStatus) ?? .null,
        ]
        fields["generatedAt"] = .string(Self.timestamp(Date()))
        return .object(fields)
    }

    private static func cacheStatus(_ statistics: ResolutionCache.Statistics) -> JSONValue {
        let lookups = statistics.hits + statistics.negativeHits + statistics.misses
        return .object([
            "entries": .number(Double(statistics.entries)), "hits": .number(Double(statistics.hits)),
            "negativeHits": .number(Double(statistics.negativeHits)), "misses": .number(Double(statistics.misses)),
            "staleServed": .number(Double(statistics.staleServed)), "refreshes": .number(Double(statistics.refreshes)),
            // Hits (fresh answers and fresh NXDOMAIN/NODATA) over every lookup; none yet: null.
            "hitRate": lookups == 0 ? .null
                : .number((Double(statistics.hits + statistics.negativeHits) / Double(lookups) * 10_000).rounded() / 10_000),
        ])
    }

    /// One object per trusted upstream of `resolver`, in the order they are asked. `route` is `null` for
    /// the default list (every name no route takes), and names a route's domains (split DNS,
    /// comma-separated) for its upstreams.
    private static func upstreamStatus(_ resolver: TrustedResolver, route: String?) -> [JSONValue] {
        let labels = UpstreamMetrics.labelValues(resolver.metrics.upstreams)
        return resolver.metrics.upstreams.indices.map { index in
            let snapshot = resolver.metrics.meter(at: index).snapshot
            let status = resolver.health.status(at: index)
            let (state, failuresInARow): (String, Int) = switch status {
            case .healthy: ("healthy", 0)
            case .heldDown(let failures, _): ("held-down", failures)
            case .probing(let failures): ("probing", failures)
            }
            let replies = snapshot.replies
            return .object([
                "upstream": .string(labels[index]),
                "route": route.map { .string($0) } ?? .null,
                "status": .string(state),
                "detail": .string(status.description),
                "consecutiveFailures": .number(Double(failuresInARow)),
                "queries": .number(Double(snapshot.queries)),
                "replies": .number(Double(replies)),
                "failures": .number(Double(snapshot.failures.values.reduce(0, +))),
                "failuresByReason": .object(Dictionary(uniqueKeysWithValues: snapshot.failures.filter { $0.value > 0 }
                    .map { ($0.key.label, .number(Double($0.value))) })),
                "meanRoundTripMilliseconds": replies == 0 ? .null
                    : .number((snapshot.roundTripSeconds / Double(replies) * 1e6).rounded() / 1000),
            ])
        }
    }

    /// What the metrics count of DNSSEC: the resolutions by status (``DNSSECMetrics``, what
    /// `hostpin_dnssec_answers_total` exposes), and `upstreamBogus`, the upstreams' answers that failed
    /// validation (their `bogus` failures, a valid answer from the next upstream included). Without the
    /// status counters only `bogus` is counted, from the upstreams (`counted` lists what is).
    private static func dnssecStatus(_ resolver: TrustedResolver, _ dnssec: DNSSECMetrics?) -> JSONValue {
        let upstreamBogus = resolver.metrics.upstreams.indices.reduce(UInt64(0)) {
            $0 + (resolver.metrics.meter(at: $1).snapshot.failures[.bogus] ?? 0)
        }
        guard let dnssec else {
            return .object(["counted": .array([.string("bogus")]), "secure": .null, "insecure": .null,
                            "indeterminate": .null, "bogus": .number(Double(upstreamBogus)),
                            "upstreamBogus": .number(Double(upstreamBogus))])
        }
        var fields: [String: JSONValue] = ["upstreamBogus": .number(Double(upstreamBogus))]
        for status in DNSSECMetrics.Status.allCases { fields[status.label] = .number(Double(dnssec.count(status))) }
        fields["counted"] = .array(DNSSECMetrics.Status.allCases.map { .string($0.label) })
        return .object(fields)
    }

    private static func dnsStatus(_ dns: DNSQueryMetrics) -> JSONValue {
        var outcomes: [String: JSONValue] = [:]
        var total: UInt64 = 0
        for outcome in DNSQueryMetrics.Outcome.allCases {
            var count: UInt64 = 0
            for type in DNSQueryMetrics.QueryType.allCases {
                for transport in DNSQueryMetrics.Transport.allCases { count += dns.count(type, outcome, over: transport) }
            }
            outcomes[outcome.label] = .number(Double(count))
            total += count
        }
        return .object(["queries": .number(Double(total)), "byOutcome": .object(outcomes)])
    }

    /// The proxy's requests by status and its refusals: 403, what it answers for a blocked host, a
    /// private address, a CONNECT port not allowed, itself as target.
    private static func proxyStatus(_ proxy: ProxyMetrics) -> JSONValue {
        var byStatus: [String: JSONValue] = [:]
        var total: UInt64 = 0
        for status in ProxyMetrics.codes {
            let count = ProxyMetrics.RequestKind.allCases.reduce(UInt64(0)) { $0 + proxy.requests($1, status: status) }
            guard count > 0 else { continue }
            byStatus[String(status)] = .number(Double(count))
            total += count
        }
        return .object([
            "requests": .number(Double(total)),
            "refusals": .number(Double(ProxyMetrics.RequestKind.allCases.reduce(UInt64(0)) { $0 + proxy.requests($1, status: 403) })),
            "byStatus": .object(byStatus),
            "openConnections": .number(Double(proxy.openConnections)),
            "acceptedConnections": .number(Double(proxy.acceptedConnections)),
        ])
    }

    private static func watchStatus(_ statistics: LocalResolverWatch.Statistics) -> JSONValue {
        .object([
            "compared": .number(Double(statistics.compared)), "consistent": .number(Double(statistics.consistent)),
            "hijacked": .number(Double(statistics.hijacked)), "inconclusive": .number(Double(statistics.inconclusive)),
            "hijackedNames": .number(Double(statistics.hijackedNames)),
            "skipped": .number(Double(statistics.recentlyCompared + statistics.rateLimited + statistics.dropped)),
        ])
    }

    private static func findingsStatus(_ findings: HijackFindings) -> JSONValue {
        .object([
            "limit": .number(Double(findings.limit)),
            "total": .number(Double(findings.total)),
            "items": .array(findings.newestFirst.map { finding in
                let report = finding.report
                let trusted: JSONValue = switch report.trusted {
                case .addresses(let resolution): .array(resolution.ipAddresses.map { .string($0.description) })
                case .nxdomain: .string("NXDOMAIN")
                case .nodata: .string("NODATA")
                }
                let type = switch report.family {
                case .v4: "A"
                case .v6: "AAAA"
                case .any: "A and AAAA"
                }
                return .object([
                    "name": .string(report.name.text),
                    "type": .string(type),
                    "foundAt": .string(timestamp(finding.foundAt)),
                    "local": .array(report.local.map { .string($0.description) }),
                    "trusted": trusted,
                    "reasons": .array(report.reasons.map { .object(["code": .string($0.code.rawValue), "detail": .string($0.detail)]) }),
                ])
            }),
        ])
    }

    /// RFC 3339 in UTC with milliseconds: `2026-12-02T01:02:03.456Z`.
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

extension Duration {
    /// The duration in seconds, with its fraction.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
