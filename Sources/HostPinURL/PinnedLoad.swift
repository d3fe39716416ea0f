import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import Synchronization

/// One intercepted request from `startLoading` to its end: resolve the host, pin, send through the
/// transport, and pass the response to the protocol's client in original-URL form. After `stop()`
/// nothing more reaches the client.
final class PinnedLoad: TransferSink {
    private struct State {
        var stopped = false
        var resolution: Task<Void, Never>?
        var transfer: (any TransferHandle)?
        /// Set once resolved, before the transfer starts.
        var pinned: PinnedRequest?
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
        let work = Task { await self.run() }
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

    private func run() async {
        let url = request.url
        guard let settings else {
            fail(URLError(.dnsLookupFailed, url: url,
                          description: "HostPin has no resolver: call PinnedURLProtocol.install(resolver:) first"))
            return
        }
        let resolution: Resolution
        do throws(ResolutionError) {
            resolution = try await settings.resolver.resolve(url?.host ?? "", family: settings.family)
        } catch {
            fail(URLError(error, url: url))
            return
        }
        guard let address = resolution.addresses.first?.address, let pinned = PinnedRequest(request, address: address)
        else {
            fail(URLError(.badURL, url: url, description: "the URL cannot be pinned"))
            return
        }
        state.withLock { $0.pinned = pinned }
        let transfer = InnerSessionTransport.shared.start(pinned.pinned, sink: self)
        let stopped = state.withLock { state in
            state.transfer = transfer
            return state.stopped
        }
        if stopped { transfer.cancel() }
    }

    private func fail(_ error: URLError) {
        guard !isStopped else { return }
        client.failed(with: error)
    }

    // MARK: TransferSink

    func received(_ response: HTTPURLResponse) {
        guard let pinned = state.withLock({ $0.stopped ? nil : $0.pinned }) else { return }
        client.received(pinned.presenting(response))
    }

    func received(_ data: Data) {
        guard !isStopped else { return }
        switch delivery {
        case .stream: client.loaded(data)
        case .buffer: state.withLock { $0.body.append(data) }
        }
    }

    func finished(with error: (any Error)?) {
        guard !isStopped else { return }
        if let error {
            let code = (error as? URLError)?.code ?? .unknown
            fail(URLError(code, url: request.url, description: error.localizedDescription))
            return
        }
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

/// The protocol instance, reachable from the resolver task and the inner session's delegate queue.
///
/// @unchecked Sendable: `URLProtocol` is explicitly not Sendable, yet Foundation expects its client to
/// be called from whatever queue the protocol works on (its own protocols call it from the shared work
/// queue and their transfer threads). The box only reads the instance's `client`, which Foundation sets
/// at creation and never changes; it holds no mutable state of its own, and `PinnedLoad.state` (a
/// Mutex) decides whether a call may still happen. Inner-session events arrive one at a time on that
/// session's serial delegate queue, so client calls keep their order.
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
