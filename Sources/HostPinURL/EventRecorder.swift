import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import Synchronization

/// Builds one request's ``PinnedURLProtocol/Event`` as its load goes, and hands it to the observer once.
/// A load has one only when an observer is set, so without one nothing is recorded.
final class EventRecorder: Sendable {
    /// A hop under way: ``PinnedURLProtocol/Hop`` with everything still open to change.
    private struct Hop {
        let url: URL
        let fetchedURL: URL
        let rules: [RuleReference]
        var transport: PinnedURLProtocol.Transport?
        var source: PinnedURLProtocol.AddressSource?
        var addresses: [IPAddress] = []
        var attempts: [PinnedURLProtocol.Attempt] = []
        var address: IPAddress?
        var status: Int?
        var certificateRefused: [IPAddress] = []

        var value: PinnedURLProtocol.Hop {
            PinnedURLProtocol.Hop(url: url, fetchedURL: fetchedURL, rules: rules, host: fetchedURL.host ?? "",
                                  transport: transport, source: source, addresses: addresses, attempts: attempts,
                                  address: address, status: status, certificateRefused: certificateRefused)
        }
    }

    private struct Draft {
        var hops: [Hop] = []
        var bytes = 0
        var finished = false
    }

    private let url: URL
    private let started = ContinuousClock.now
    private let observer: PinnedURLProtocol.Observer
    private let draft = Mutex(Draft())

    init(url: URL, observer: @escaping PinnedURLProtocol.Observer) {
        self.url = url
        self.observer = observer
    }

    /// A new hop: the application's request, or a redirect followed. `fetched` is the URL actually
    /// fetched after the rules' transparent redirects, `rules` those that decided it.
    func beginHop(_ url: URL, fetched: URL, rules: [RuleReference]) {
        draft.withLock { $0.hops.append(Hop(url: url, fetchedURL: fetched, rules: rules)) }
    }

    /// The current hop goes to `addresses` (in attempt order), which came from `source`.
    func addresses(_ addresses: [IPAddress], from source: PinnedURLProtocol.AddressSource) {
        updateHop {
            $0.addresses = addresses
            $0.source = source
        }
    }

    func transport(_ transport: PinnedURLProtocol.Transport) {
        updateHop { $0.transport = transport }
    }

    func attempting(_ address: IPAddress) {
        let after = ContinuousClock.now - started
        updateHop { $0.attempts.append(PinnedURLProtocol.Attempt(address: address, after: after)) }
    }

    func responded(_ status: Int, from address: IPAddress?) {
        updateHop { hop in
            hop.status = status
            hop.address = address
        }
    }

    /// `address`'s certificate failed the check for the hop's name.
    func certificateRefused(by address: IPAddress) {
        updateHop { $0.certificateRefused.append(address) }
    }

    func delivered(_ count: Int) {
        draft.withLock { $0.bytes += count }
    }

    /// Ends the request with `outcome` and hands the event to the observer; later calls do nothing.
    func finish(_ outcome: PinnedURLProtocol.Outcome) {
        finish { _ in outcome }
    }

    /// Ends the request with the last hop's response, delivered whole.
    func finishWithResponse() {
        finish { .response(status: $0.hops.last?.status ?? 0) }
    }

    private func finish(_ outcome: (Draft) -> PinnedURLProtocol.Outcome) {
        let ended = ContinuousClock.now
        guard let draft = draft.withLock({ draft -> Draft? in
            guard !draft.finished else { return nil }
            draft.finished = true
            return draft
        }) else { return }
        observer(PinnedURLProtocol.Event(url: url, hops: draft.hops.map(\.value), bytes: draft.bytes,
                                         duration: ended - started, outcome: outcome(draft)))
    }

    private func updateHop(_ update: (inout Hop) -> Void) {
        draft.withLock { draft in
            guard !draft.hops.isEmpty else { return }
            update(&draft.hops[draft.hops.count - 1])
        }
    }
}
