import HostPin
import HostPinDNS
import Synchronization

/// The trusted resolver behind a long-running command's cache, replaceable while it runs (a reload that
/// changes the upstreams): the ``CachingResolver`` and the DNS stub's forwarder ask this, and each
/// resolution or forwarded query asks the resolver in force when it starts, to its end — so queries in
/// flight finish on the old upstreams, whose transports (threads, connections) close once the last of
/// them is done and nothing refers to the old resolver any more.
///
/// Every resolution passes here on its way into the cache, and every reply the stub forwards on its way
/// into the stub's forward cache, so here their DNSSEC status is counted (with the metrics endpoint on):
/// once per answer received, not per cache hit.
package final class UpstreamSwitch: CompletionResolver, DNSForwarder {
    /// Guards the resolver in force.
    private let resolver: Mutex<TrustedResolver>
    /// Counts each resolution's DNSSEC status; `nil` counts nothing.
    private let dnssecMetrics: DNSSECMetrics?

    package init(_ resolver: TrustedResolver, dnssecMetrics: DNSSECMetrics? = nil) {
        self.resolver = Mutex(resolver)
        self.dnssecMetrics = dnssecMetrics
    }

    /// The resolver in force.
    package var current: TrustedResolver { resolver.withLock { $0 } }

    /// Puts `resolver` in force for every resolution that starts from now on.
    package func replace(with resolver: TrustedResolver) {
        self.resolver.withLock { $0 = resolver }
    }

    /// Not counted: the cache asks ``resolveDetailed(_:family:completion:)``; this is the watch's question.
    /// The routes of the resolver in force decide.
    package func routesSpecialUse(_ name: HostName) -> Bool { current.routesSpecialUse(name) }

    /// The routes of the resolver in force decide.
    package func servesStale(_ name: HostName) -> Bool { current.servesStale(name) }

    /// The routes of the resolver in force decide.
    package func allowsPrivateAddresses(for name: HostName) -> Bool { current.allowsPrivateAddresses(for: name) }

    package func resolve(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> Resolution {
        try await current.resolve(name, family: family)
    }

    package func resolveDetailed(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> ResolutionOutcome {
        do throws(ResolutionError) {
            let outcome = try await current.resolveDetailed(name, family: family)
            dnssecMetrics?.record(.success(outcome))
            return outcome
        } catch {
            dnssecMetrics?.record(.failure(error))
            throw error
        }
    }

    /// The resolver in force resolves on its callback path: a cache miss costs no task.
    package func resolveDetailed(_ name: HostName, family: AddressFamily,
                                 completion: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) {
        guard let dnssecMetrics else { return current.resolveDetailed(name, family: family, completion: completion) }
        current.resolveDetailed(name, family: family) { outcome in
            dnssecMetrics.record(outcome)
            completion(outcome)
        }
    }

    package func forward(_ question: ForwardedQuestion) async throws(ResolutionError) -> [UInt8] {
        try await current.forward(question)
    }

    package func forwardValidated(_ question: ForwardedQuestion, checkingDisabled: Bool) async throws(ResolutionError)
        -> ForwardedAnswer
    {
        do throws(ResolutionError) {
            let answer = try await current.forwardValidated(question, checkingDisabled: checkingDisabled)
            dnssecMetrics?.record(forwarded: .success(answer))
            return answer
        } catch {
            dnssecMetrics?.record(forwarded: .failure(error))
            throw error
        }
    }

    package var validatesDNSSEC: Bool { current.validatesDNSSEC }
}
