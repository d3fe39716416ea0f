import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import Synchronization

/// One intercepted request from `startLoading` to its end: resolve the host, send to the first pinned
/// address (the next one when a connection cannot be made), and pass the response to the protocol's
/// client in original-URL form. After `stop()` nothing more reaches the client.
final class PinnedLoad: TransferSink {
    private struct State {
        var stopped = false
        var resolution: Task<Void, Never>?
        var transfer: (any TransferHandle)?
        /// Addresses still to try after the current one, in resolution order.
        var remaining: [IPAddress] = []
        var request: PinnedRequest?
        var responded = false
        /// The body collected for completion-handler tasks (see ``ResponseDelivery``).
        var body = Data()
    }

    private let client: ClientReference
    private let request: URLRequest
    private let delivery: ResponseDelivery
    private let settings: PinnedURLProtocol.Settings?
    private let state = Mutex(State())

    init(client: ClientReference, request: URLRequest, delivery: ResponseDelivery,
         settings: PinnedURLProtocol.Settings?) {
        self.client = client
        self.request = request
        self.delivery = delivery
        self.settings = settings
    }

    func start() {
        let work = Task { await self.resolve() }
        state.withLock { $0.resolution = work }
    }

    func stop() {
        let (resolution, transfer) = state.withLock { state in
            state.stopped = true
            return (state.resolution, state.transfer)
        }
        resolution?.cancel()
        transfer?.cancel()
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func resolve() async {
        let url = request.url
        guard let settings else {
            fail(URLError(.dnsLookupFailed, url: url,
                          description: "HostPin has no resolver: call PinnedURLProtocol.install(resolver:) first"))
            return
        }
        guard let pinned = PinnedRequest(request) else {
            fail(URLError(.badURL, url: url, description: "the URL has no host"))
            return
        }
        let resolution: Resolution
        do throws(ResolutionError) {
            resolution = try await settings.resolver.resolve(pinned.host, family: settings.family)
        } catch {
            fail(URLError(error, url: url))
            return
        }
        state.withLock { state in
            state.request = pinned
            state.remaining = resolution.ipAddresses
        }
        sendToNextAddress()
    }

    /// Starts the transfer to the next untried address; false when none is left.
    @discardableResult
    private func sendToNextAddress() -> Bool {
        guard let (request, address) = state.withLock({ state -> (PinnedRequest, IPAddress)? in
            guard !state.stopped, let request = state.request, !state.remaining.isEmpty else { return nil }
            return (request, state.remaining.removeFirst())
        }), let settings else { return false }
        let transfer = Self.transport(for: request, to: address, tls: settings.tls).start(request, to: address, sink: self)
        let stopped = state.withLock { state in
            state.transfer = transfer
            return state.stopped
        }
        if stopped { transfer.cancel() }
        return true
    }

    /// libcurl for HTTPS (SNI and the certificate check must use the name) and for IPv6 addresses
    /// (FoundationNetworking rejects IPv6-literal URLs: URL and curl disagree on the bracketed host);
    /// the inner URLSession for plain HTTP to IPv4.
    private static func transport(for request: PinnedRequest, to address: IPAddress,
                                  tls: CurlTransport.TLS) -> any Transport {
        if request.url.scheme?.lowercased() == "https" || address.family == .v6 {
            return CurlTransport.shared(tls)
        }
        return InnerSessionTransport.shared
    }

    private func fail(_ error: URLError) {
        guard !isStopped else { return }
        client.failed(with: error)
    }

    // MARK: TransferSink

    func received(_ response: HTTPURLResponse) {
        guard let request = state.withLock({ state -> PinnedRequest? in
            guard !state.stopped else { return nil }
            state.responded = true
            return state.request
        }) else { return }
        client.received(request.presenting(response))
    }

    func received(_ data: Data) {
        guard !isStopped else { return }
        switch delivery {
        case .stream: client.loaded(data)
        case .buffer: state.withLock { $0.body.append(data) }
        }
    }

    func finished(with failure: TransferFailure?) {
        if let failure {
            // A connection that could not be made is worth another address; anything later is final.
            if case .connect = failure, !state.withLock({ $0.responded }), sendToNextAddress() { return }
            let error = failure.urlError
            fail(URLError(error.code, url: request.url, description: error.localizedDescription))
            return
        }
        guard !isStopped else { return }
        if delivery == .buffer {
            let body = state.withLock { state in
                defer { state.body = Data() }
                return state.body
            }
            if !body.isEmpty { client.loaded(body) }
        }
        client.finished()
    }
}

/// The protocol instance, reachable from the resolver task, the inner session's delegate queue and the
/// curl thread.
///
/// @unchecked Sendable: `URLProtocol` is explicitly not Sendable, yet Foundation expects its client to
/// be called from whatever queue the protocol works on (its own protocols call it from the shared work
/// queue and their transfer threads). The box only reads the instance's `client`, which Foundation sets
/// at creation and never changes; it holds no mutable state of its own, and `PinnedLoad.state` (a
/// Mutex) decides whether a call may still happen. One transfer's events arrive one at a time (the
/// inner session's serial delegate queue, or the curl thread), so client calls keep their order.
final class ClientReference: @unchecked Sendable {
    // Weak: the protocol instance owns its load, which owns this reference.
    private weak let owner: PinnedURLProtocol?

    init(_ owner: PinnedURLProtocol) {
        self.owner = owner
    }

    func received(_ response: HTTPURLResponse) {
        guard let owner else { return }
        owner.client?.urlProtocol(owner, didReceive: response, cacheStoragePolicy: .notAllowed)
    }

    func loaded(_ data: Data) {
        guard let owner else { return }
        owner.client?.urlProtocol(owner, didLoad: data)
    }

    func finished() {
        guard let owner else { return }
        owner.client?.urlProtocolDidFinishLoading(owner)
    }

    func failed(with error: URLError) {
        guard let owner else { return }
        owner.client?.urlProtocol(owner, didFailWithError: error)
    }
}
