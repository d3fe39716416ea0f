import HostPin
import HostPinDNS
import Synchronization

/// The trusted resolver behind a long-running command's cache, replaceable while it runs (a reload that
/// changes the upstreams): the ``CachingResolver`` and the DNS stub's forwarder ask this, and each
/// resolution or forwarded query asks the resolver in force when it starts, to its end — so queries in
/// flight finish on the old upstreams, whose transports (threads, connections) close once the last of
/// them is done and nothing refers to the old resolver any more.
package final class UpstreamSwitch: CompletionResolver, DNSForwarder {
    /// Guards the resolver in force.
    private let resolver: Mutex<TrustedResolver>

    package init(_ resolver: TrustedResolver) {
        self.resolver = Mutex(resolver)
    }

    /// The resolver in force.
    package var current: TrustedResolver { resolver.withLock { $0 } }

    /// Puts `resolver` in force for every resolution that starts from now on.
    package func replace(with resolver: TrustedResolver) {
        self.resolver.withLock { $0 = resolver }
    }

    package func resolve(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> Resolution {
        try await current.resolve(name, family: family)
    }

    package func resolveDetailed(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> ResolutionOutcome {
        try await current.resolveDetailed(name, family: family)
    }

    /// The resolver in force resolves on its callback path: a cache miss costs no task.
    package func resolveDetailed(_ name: HostName, family: AddressFamily,
                                 completion: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) {
        current.resolveDetailed(name, family: family, completion: completion)
    }

    package func forward(_ question: ForwardedQuestion) async throws(ResolutionError) -> [UInt8] {
        try await current.forward(question)
    }

    package func forwardValidated(_ question: ForwardedQuestion, checkingDisabled: Bool) async throws(ResolutionError)
        -> ForwardedAnswer
    {
        try await current.forwardValidated(question, checkingDisabled: checkingDisabled)
    }

    package var validatesDNSSEC: Bool { current.validatesDNSSEC }
}
