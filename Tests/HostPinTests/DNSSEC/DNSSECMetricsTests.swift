import Foundation
import HostPin
import Testing

/// `hostpin_dnssec_answers_total{status}`: one count per trusted resolution by what validation found,
/// with outcomes built by hand (the values a validating resolver hands the cache).
@Suite struct DNSSECMetricsTests {
    private static let name = try! HostName.parse("www.example.test")
    private static let bogus = BogusReason(rrset: "modified.example.test. A", keyTag: 12345, problem: .signatureInvalid("bad signature"))

    private static func addresses(_ status: DNSSECStatus?) -> Result<ResolutionOutcome, ResolutionError> {
        let resolution = Resolution(name: name, addresses: [ResolvedAddress(address: IPAddress("127.0.0.10")!, ttl: 60)], cnames: [],
                                    upstream: nil, source: .upstream, receivedAt: Date(), dnssec: status)
        return .success(ResolutionOutcome(answer: .addresses(resolution), ttlLeft: 60, age: 0))
    }

    private static func negative(_ status: DNSSECStatus?) -> Result<ResolutionOutcome, ResolutionError> {
        let answer = NegativeAnswer(name: name, family: .v4, kind: .nxdomain, cnames: [], soa: nil, upstream: nil, source: .upstream,
                                    receivedAt: Date(), dnssec: status)
        return .success(ResolutionOutcome(answer: .negative(answer), ttlLeft: 60, age: 0))
    }

    @Test func eachStatusIsCountedOnceAndUnvalidatedOutcomesNotAtAll() {
        let metrics = DNSSECMetrics()
        for outcome in [Self.addresses(.secure), Self.addresses(.secure), Self.negative(.secure), Self.addresses(.insecure),
                        Self.negative(.indeterminate), Self.addresses(.bogus(Self.bogus)),
                        .failure(.dnssecBogus(Self.bogus, [])),
                        // Not validated, or no answer at all: nothing.
                        Self.addresses(nil), Self.negative(nil), .failure(.upstreamsFailed([])), .failure(.cancelled)] {
            metrics.record(outcome)
        }
        #expect(metrics.count(.secure) == 3)
        #expect(metrics.count(.insecure) == 1)
        #expect(metrics.count(.indeterminate) == 1)
        #expect(metrics.count(.bogus) == 2)
    }

    @Test func theServiceExpositionHasEveryStatusSeries() throws {
        let metrics = DNSSECMetrics()
        metrics.record(Self.addresses(.secure))
        metrics.record(.failure(.dnssecBogus(Self.bogus, [])))
        var configuration = TrustedResolver.Configuration(upstreams: [Upstream("127.0.0.1:9")!])
        configuration.tries = 1
        let exposition = ServiceMetrics(resolver: try TrustedResolver(configuration: configuration), cache: ResolutionCache(),
                                        dnssec: metrics).exposition()
        #expect(exposition.contains("# TYPE hostpin_dnssec_answers_total counter\n"))
        for line in [#"hostpin_dnssec_answers_total{status="secure"} 1"#, #"hostpin_dnssec_answers_total{status="insecure"} 0"#,
                     #"hostpin_dnssec_answers_total{status="indeterminate"} 0"#, #"hostpin_dnssec_answers_total{status="bogus"} 1"#] {
            #expect(exposition.contains(line + "\n"), "\(line)")
        }
        // Without the counters (no DNSSEC metrics given) the family is absent.
        let without = ServiceMetrics(resolver: try TrustedResolver(configuration: configuration), cache: ResolutionCache()).exposition()
        #expect(!without.contains("hostpin_dnssec_answers_total"))
    }
}
