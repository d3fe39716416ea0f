import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import Synchronization

/// Drives one intercepted request's ``InterceptionStateMachine``: it feeds the machine what happens
/// (the start, the resolver's answer, each transfer's events, `stopLoading`) and performs the actions
/// the machine returns — resolving off the caller's queue, starting transfers, filing cookies, calling
/// the protocol's client, and telling the observer, if any, what happened (``EventRecorder``). Every
/// decision is the machine's; this class only does I/O.
final class PinnedLoad: TransferSink {
    private struct State {
        var machine: InterceptionStateMachine?
        var work: Task<Void, Never>?
        var transfer: (any TransferHandle)?
        /// Whether body deliveries of the current transfer are flow-controlled (see ``Transport``).
        var waitForClient = false
    }

    private let client: ClientReference
    private let request: URLRequest
    private let settings: PinnedURLProtocol.Settings?
    /// Builds the observer's event; `nil` without an observer, so nothing is recorded then.
    private let recorder: EventRecorder?
    private let state: Mutex<State>

    init(client: ClientReference, request: URLRequest, body: RequestBody, delivery: ResponseDelivery,
         settings: PinnedURLProtocol.Settings?) {
        self.client = client
        self.request = request
        self.settings = settings
        recorder = settings?.observer.flatMap { observer in request.url.map { EventRecorder(url: $0, observer: observer) } }
        let machine = settings.map { settings in
            InterceptionStateMachine(request: request, body: body, configuration: .init(
                rules: settings.rules, redirects: settings.redirects, cookieStorage: settings.cookieStorage,
                plainHTTP: settings.plainHTTP, allowPrivate: settings.allowPrivate, delivery: delivery,
                routeAllowsPrivate: { [resolver = settings.resolver] in resolver.allowsPrivateAddresses(for: $0) },
                ranking: settings.ranking))
        }
        state = Mutex(State(machine: machine))
    }

    /// Starts the request off the caller's queue: `startLoading` runs on FoundationNetworking's work
    /// queue, where starting an inner URLSession task would trap.
    func start() {
        guard settings != nil else {
            client.failed(with: URLError(.unknown, url: request.url,
                                         description: "HostPin has no resolver: call PinnedURLProtocol.install(resolver:) first"))
            return
        }
        run { self.perform(self.event { $0.start() }) }
    }

    func stop() {
        client.stop()
        let (action, work, transfer) = state.withLock { state in
            (state.machine?.stop() ?? .none, state.work, state.transfer)
        }
        perform(action)
        work?.cancel()
        transfer?.cancel()
    }

    /// Feeds the machine one event.
    private func event(_ event: (inout InterceptionStateMachine) -> InterceptionStateMachine.Action) -> InterceptionStateMachine.Action {
        state.withLock { state in
            guard state.machine != nil else { return .none }
            return event(&state.machine!)
        }
    }

    /// Runs `body` in a task of its own, cancelled by `stop()`.
    private func run(_ body: @escaping @Sendable () async -> Void) {
        let work = Task { await body() }
        let stopped = state.withLock { state in
            state.work = work
            return state.machine?.isStopped ?? true
        }
        if stopped { work.cancel() }
    }

    private func perform(_ action: InterceptionStateMachine.Action) {
        switch action {
        case .none:
            return
        case .resolve(let hop):
            begin(hop.start)
            guard let settings else { return }
            run {
                let result: Result<Resolution, ResolutionError>
                do throws(ResolutionError) {
                    result = .success(try await settings.resolver.resolve(hop.request.host, family: settings.family))
                } catch {
                    result = .failure(error)
                }
                self.perform(self.event { $0.resolved(result) })
            }
        case .send(let hop, let transfer):
            if transfer.beginsHop { begin(hop.start) }
            if let plan = transfer.plan { recorder?.addresses(plan.addresses, from: plan.source) }
            send(hop, transfer)
        case .sendResolvedBySystem(let hop):
            begin(hop.start)
            recorder?.addresses([], from: .pass)
            sendResolvedBySystem(hop.request)
        case .answerLocally(let hop, let response, let body):
            begin(hop.start)
            recorder?.transport(.localResponse)
            state.withLock { $0.waitForClient = false }
            received(response, from: nil)
            if !body.isEmpty { received(body) }
            finished(with: nil)
        case .received(let response, let cookies, let step):
            if let cookies { file(response, cookies) }
            switch step {
            case .deliver: client.received(response)
            case .considerRedirect: perform(event { $0.filedCookies() })
            case .fail(let error): perform(.fail(error, began: nil, cancelTransfer: true))
            }
        case .deliver(let data):
            recorder?.delivered(data.count)
            client.loaded(data, flowControl: state.withLock { $0.waitForClient })
        case .buffered(let count):
            recorder?.delivered(count)
        case .finish(let body):
            if let body { client.loaded(body, flowControl: false) }
            recorder?.finishWithResponse()
            client.finished()
        case .fail(let error, let began, let cancelTransfer):
            if let began { begin(began) }
            if cancelTransfer { state.withLock { $0.transfer }?.cancel() }
            recorder?.finish(.failed(error))
            client.failed(with: error)
        case .cancel(let error):
            recorder?.finish(.failed(error))
        case .askPolicy(let response, let proposed, let policy):
            let next = policy(response, proposed)
            perform(event { $0.policyDecided(next) })
        }
    }

    private func begin(_ hop: InterceptionStateMachine.HopStart) {
        recorder?.beginHop(hop.url, fetched: hop.fetchedURL, rules: hop.rules)
    }

    private func send(_ hop: InterceptionStateMachine.Hop, _ transfer: InterceptionStateMachine.Transfer) {
        guard let settings else { return }
        let transport: any Transport = transfer.transport == .urlSession ? InnerSessionTransport.shared : CurlTransport.shared(settings.tls)
        state.withLock { $0.waitForClient = transport.waitsForClient }
        recorder?.transport(transfer.transport)
        let feed = settings.ranking.flatMap { ranking in
            UInt16(exactly: hop.request.port).map { RankingFeed(ranking: ranking, name: hop.request.rankingName, port: $0) }
        }
        probeUnmeasured(hop, transfer, settings, feed)
        started(transport.start(hop.request, to: transfer.addresses,
                                attemptDelay: InterceptionStateMachine.happyEyeballs.attemptDelay,
                                reportsConnections: recorder != nil, feed: feed, sink: self))
    }

    /// Starts the background TLS probe of `transfer`'s addresses when the hop is HTTPS, has several
    /// addresses, and the ranking lacks a time for one of them (``RankingProbe``: once per name and port
    /// per interval): this transfer measures only the address it connects to.
    private func probeUnmeasured(_ hop: InterceptionStateMachine.Hop, _ transfer: InterceptionStateMachine.Transfer,
                                 _ settings: PinnedURLProtocol.Settings, _ feed: RankingFeed?) {
        guard let probe = settings.probe, let feed, transfer.plan != nil, transfer.addresses.count > 1,
              hop.request.url.scheme?.lowercased() == "https",
              feed.ranking.lacksTime(for: transfer.addresses, port: feed.port),
              let name = try? HostName.parse(hop.request.host)
        else { return }
        probe.probe(name, port: feed.port, addresses: transfer.addresses)
    }

    /// Sends `hop`, whose host a `pass` rule names, with libcurl resolving the name through the system as
    /// if HostPin were absent. Only redirect hops and transparent targets get here: ``PinnedURLProtocol``
    /// declines a first request a `pass` rule decides, but cannot hand a later hop back to URLSession.
    private func sendResolvedBySystem(_ hop: PinnedRequest) {
        guard let settings else { return }
        let transport = CurlTransport.shared(settings.tls)
        state.withLock { $0.waitForClient = transport.waitsForClient }
        recorder?.transport(.libcurl)
        started(transport.startResolvingBySystem(hop, reportsConnections: recorder != nil, sink: self))
    }

    /// Keeps `transfer` for `stop()`, or cancels it when the stop came first.
    private func started(_ transfer: any TransferHandle) {
        let stopped = state.withLock { state in
            state.transfer = transfer
            return state.machine?.isStopped ?? true
        }
        if stopped { transfer.cancel() }
    }

    /// Files the response's `Set-Cookie` fields where the machine says (the hop's ORIGINAL URL).
    private func file(_ response: HTTPURLResponse, _ filing: InterceptionStateMachine.CookieFiling) {
        guard let storage = settings?.cookieStorage else { return }
        var fields: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        let cookies = HTTPCookie.cookies(withResponseHeaderFields: fields, for: filing.url)
        if !cookies.isEmpty { storage.setCookies(cookies, for: filing.url, mainDocumentURL: filing.mainDocumentURL) }
    }

    // MARK: TransferSink

    func attempting(_ address: IPAddress) {
        recorder?.attempting(address)
    }

    func received(_ response: HTTPURLResponse, from address: IPAddress?) {
        let action = event { $0.receivedHead(response) }
        if case .received = action { recorder?.responded(response.statusCode, from: address) }
        perform(action)
    }

    func received(_ data: Data) {
        perform(event { $0.receivedData(data) })
    }

    func finished(with failure: TransferFailure?) {
        if case .certificate(_, let address) = failure { recorder?.certificateRefused(by: address) }
        perform(event { $0.transferFinished(failure) })
    }
}
