import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import Synchronization

/// One intercepted request from `startLoading` to its end: resolve the host, send to the pinned addresses
/// (racing both families as Happy Eyeballs does; the next address when a connection cannot be made),
/// follow redirects per the policy (each hop resolved and pinned on its own, carrying the application's
/// credentials to their origin only), file cookies under each hop's original URL, pass the final
/// response to the protocol's client in original-URL form, and tell the observer, if any, what happened
/// (``EventRecorder``). After `stop()` nothing more reaches the client.
final class PinnedLoad: TransferSink {
    private struct State {
        var stopped = false
        var work: Task<Void, Never>?
        var transfer: (any TransferHandle)?
        /// The hop being sent (the application's request, then each redirect's).
        var hop: PinnedRequest?
        /// Redirects followed so far.
        var hops = 0
        /// Transfers still to try for this hop after the current one, each with the addresses it may
        /// connect to (``PinnedLoad/attempts(for:to:settings:)``).
        var remaining: [[IPAddress]] = []
        var responded = false
        /// Whether body deliveries of the current transfer are flow-controlled (see ``Transport``).
        var waitForClient = false
        /// Set when this hop's response is a redirect being followed: its body is dropped.
        var following: (URLRequest, RequestBody)?
        /// The body collected for completion-handler tasks (see ``ResponseDelivery``).
        var body = Data()
    }

    private let client: ClientReference
    private let request: URLRequest
    private let body: RequestBody
    private let delivery: ResponseDelivery
    private let settings: PinnedURLProtocol.Settings?
    /// The application's `Authorization` and own `Cookie`, for redirect hops to their origin.
    private let credentials: OriginCredentials
    /// Builds the observer's event; `nil` without an observer, so nothing is recorded then.
    private let recorder: EventRecorder?
    private let state = Mutex(State())

    init(client: ClientReference, request: URLRequest, body: RequestBody, delivery: ResponseDelivery,
         settings: PinnedURLProtocol.Settings?) {
        self.client = client
        self.request = request
        self.body = body
        self.delivery = delivery
        self.settings = settings
        credentials = OriginCredentials(of: request, cookieStorage: settings?.cookieStorage)
        recorder = settings?.observer.flatMap { observer in request.url.map { EventRecorder(url: $0, observer: observer) } }
    }

    func start() {
        load(request, body: body)
    }

    func stop() {
        client.stop()
        let (work, transfer) = state.withLock { state in
            state.stopped = true
            return (state.work, state.transfer)
        }
        recorder?.finish(.failed(URLError(.cancelled, url: request.url, description: "the task was cancelled")))
        work?.cancel()
        transfer?.cancel()
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    /// Resolves `hop`'s host and sends it, off the caller's queue.
    private func load(_ hop: URLRequest, body: RequestBody) {
        let work = Task { await self.resolveAndSend(hop, body: body) }
        let stopped = state.withLock { state in
            state.work = work
            return state.stopped
        }
        if stopped { work.cancel() }
    }

    /// At most this many transparent redirects by rules for one hop; then `.httpTooManyRedirects`. (Loops
    /// between rules are refused when the rules load; this bounds whatever the check cannot see.)
    static let maxRuleRedirects = 16

    /// Decides `hop` by the rules (following transparent redirects, each target decided again), then
    /// acts: fail a blocked request, answer locally, pass it to the system's resolution, or resolve its
    /// host (or take a pin rule's addresses) and send it with the header rules' edits.
    private func resolveAndSend(_ hop: URLRequest, body: RequestBody) async {
        let url = hop.url
        guard let settings else {
            fail(URLError(.dnsLookupFailed, url: url,
                          description: "HostPin has no resolver: call PinnedURLProtocol.install(resolver:) first"))
            return
        }
        var sent = hop
        var decision = Self.decide(sent, by: settings.rules)
        var decidedBy = decision.rule.map { [$0] } ?? []
        var rewrites = 0
        while case .redirect(let redirect) = decision, redirect.isTransparent {
            rewrites += 1
            guard rewrites <= Self.maxRuleRedirects else {
                if let url { recorder?.beginHop(url, fetched: redirect.target, rules: decidedBy) }
                fail(URLError(.httpTooManyRedirects, url: url,
                              description: "the rules redirected \(url?.absoluteString ?? "the request") more than "
                                  + "\(Self.maxRuleRedirects) times (last by \(redirect.rule))"))
                return
            }
            sent.url = redirect.target
            sent.setValue(nil, forHTTPHeaderField: "Host")
            credentials.apply(to: &sent, cookieStorage: settings.cookieStorage)
            decision = Self.decide(sent, by: settings.rules)
            if let rule = decision.rule { decidedBy.append(rule) }
        }
        var edited = sent
        if case .send(_, let edits) = decision { edited.apply(edits) }
        guard let url, let pinned = PinnedRequest(edited, body: body, unedited: sent, presentedURL: url) else {
            fail(URLError(.badURL, url: url, description: "the URL has no host"))
            return
        }
        recorder?.beginHop(url, fetched: pinned.url, rules: decidedBy)
        let addresses: [IPAddress]
        let source: PinnedURLProtocol.AddressSource
        switch decision {
        case .block(let rule):
            fail(URLError.blocked(by: rule, url: pinned.url))
            return
        case .respond(let response):
            recorder?.transport(.localResponse)
            answer(status: response.status, headers: response.headers, body: response.body, to: pinned)
            return
        case .redirect(let redirect):
            recorder?.transport(.localResponse)
            answer(status: redirect.status ?? 302, headers: [("Location", redirect.target.absoluteString), ("Content-Length", "0")],
                   body: Data(), to: pinned)
            return
        case .pass(.rule):
            recorder?.addresses([], from: .pass)
            sendResolvedBySystem(pinned)
            return
        case .send(.pinned(let pinnedAddresses, _), _):
            addresses = pinnedAddresses
            source = .pinned
        case .send(.resolve, _), .pass(.addressLiteral), .pass(.localhost):
            let resolution: Resolution
            do throws(ResolutionError) {
                resolution = try await settings.resolver.resolve(pinned.host, family: settings.family)
            } catch {
                fail(URLError(error, url: pinned.url))
                return
            }
            source = PinnedURLProtocol.AddressSource(resolution.source)
            // The rebinding guard is about what DNS answers for a name: an IP literal or localhost is
            // where the application asked to go.
            if settings.allowPrivate || resolution.name.literalAddress != nil || resolution.name.isLocalhost {
                addresses = resolution.ipAddresses
            } else {
                do throws(RebindingRefusal) {
                    addresses = try RebindingGuard.admitted(resolution.ipAddresses, for: resolution.name)
                } catch {
                    fail(URLError.privateAddress(error, url: pinned.url))
                    return
                }
            }
        }
        let attempts = Self.attempts(for: pinned, to: addresses, settings: settings)
        recorder?.addresses(attempts.flatMap { $0 }, from: source)
        state.withLock { state in
            state.hop = pinned
            state.remaining = attempts
            state.responded = false
            state.following = nil
        }
        if !sendToNextAddress() {
            fail(URLError(.cannotConnectToHost, url: pinned.url, description: "\(pinned.host) has no address to connect to"))
        }
    }

    /// What `rules` say about `request`; without rules (the common case) the request is sent unedited,
    /// without building the policy's view of it.
    private static func decide(_ request: URLRequest, by rules: Rules) -> PolicyDecision {
        guard !rules.isEmpty, let policy = PolicyRequest(request) else { return .send(.resolve, headerEdits: []) }
        return rules.decide(policy)
    }

    /// Hands `hop` a response made here (a `respond` rule's, or a `redirect` rule's 3xx) through the same
    /// path as a transfer's: the redirect policy, cookies and the original URL all apply.
    private func answer(status: Int, headers: [(name: String, value: String)], body: Data, to hop: PinnedRequest) {
        var fields: [String: String] = [:]
        for (name, value) in headers { fields[name] = fields[name].map { "\($0), \(value)" } ?? value }
        guard let response = HTTPURLResponse(url: hop.url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)
        else {
            fail(URLError(.badServerResponse, url: hop.url, description: "a rule's response could not be built"))
            return
        }
        state.withLock { state in
            state.hop = hop
            state.remaining = []
            state.responded = false
            state.following = nil
            state.waitForClient = false
        }
        received(response, from: nil)
        if !body.isEmpty { received(body) }
        finished(with: nil)
    }

    /// Sends `hop`, whose host a `pass` rule names, with libcurl resolving the name through the system as
    /// if HostPin were absent. Only redirect hops and transparent targets get here: ``PinnedURLProtocol``
    /// declines a first request a `pass` rule decides, but cannot hand a later hop back to URLSession.
    private func sendResolvedBySystem(_ hop: PinnedRequest) {
        guard let settings else { return }
        let transport = CurlTransport.shared(settings.tls)
        state.withLock { state in
            state.hop = hop
            state.remaining = []
            state.responded = false
            state.following = nil
            state.waitForClient = transport.waitsForClient
        }
        recorder?.transport(.libcurl)
        let transfer = transport.startResolvingBySystem(hop, reportsConnections: recorder != nil, sink: self)
        let stopped = state.withLock { state in
            state.transfer = transfer
            return state.stopped
        }
        if stopped { transfer.cancel() }
    }

    /// Starts this hop's next untried transfer; false when none is left.
    @discardableResult
    private func sendToNextAddress() -> Bool {
        guard let (hop, addresses) = state.withLock({ state -> (PinnedRequest, [IPAddress])? in
            guard !state.stopped, let hop = state.hop, !state.remaining.isEmpty else { return nil }
            return (hop, state.remaining.removeFirst())
        }), let settings else { return false }
        let transport = Self.transport(for: hop, to: addresses, settings: settings)
        state.withLock { $0.waitForClient = transport.waitsForClient }
        recorder?.transport(transport is InnerSessionTransport ? .urlSession : .libcurl)
        let transfer = transport.start(hop, to: addresses, attemptDelay: Self.happyEyeballs.attemptDelay,
                                       reportsConnections: recorder != nil, sink: self)
        let stopped = state.withLock { state in
            state.transfer = transfer
            return state.stopped
        }
        if stopped { transfer.cancel() }
        return true
    }

    /// How a name with both A and AAAA addresses is connected to (RFC 8305): IPv6 first, IPv4 250 ms
    /// later if no connection yet, the first to connect wins (libcurl races them).
    static let happyEyeballs = HappyEyeballs()

    /// The transfers to try for `request`, in order, each with the addresses it may connect to. Through
    /// the inner URLSession (plain HTTP to IPv4 addresses only, by default) one address per transfer,
    /// the next when one cannot connect: URLSession reports no connection before the response, so racing
    /// addresses there would send the request twice. Through libcurl (HTTPS, any IPv6 address — so every
    /// name with both A and AAAA —, or plain HTTP when the settings ask) one transfer with every address
    /// in Happy Eyeballs order, which curl races itself (``CurlPinning``).
    static func attempts(for request: PinnedRequest, to addresses: [IPAddress],
                         settings: PinnedURLProtocol.Settings) -> [[IPAddress]] {
        if usesInnerSession(request, to: addresses, settings: settings) { return addresses.map { [$0] } }
        return addresses.isEmpty ? [] : [happyEyeballs.order(addresses)]
    }

    /// libcurl for HTTPS (SNI and the certificate check must use the name), for IPv6 addresses
    /// (FoundationNetworking rejects IPv6-literal URLs: URL and curl disagree on the bracketed host), and
    /// for plain HTTP when the settings ask for it; the inner URLSession for plain HTTP to IPv4 otherwise.
    private static func transport(for request: PinnedRequest, to addresses: [IPAddress],
                                  settings: PinnedURLProtocol.Settings) -> any Transport {
        usesInnerSession(request, to: addresses, settings: settings) ? InnerSessionTransport.shared : CurlTransport.shared(settings.tls)
    }

    private static func usesInnerSession(_ request: PinnedRequest, to addresses: [IPAddress],
                                         settings: PinnedURLProtocol.Settings) -> Bool {
        request.url.scheme?.lowercased() != "https" && settings.plainHTTP == .urlSession
            && addresses.allSatisfy { $0.family == .v4 }
    }

    private func fail(_ error: URLError) {
        guard !isStopped else { return }
        recorder?.finish(.failed(error))
        client.failed(with: error)
    }

    /// The request to follow after `response`, per the redirect policy; `nil` to deliver `response`.
    private func redirect(after response: HTTPURLResponse, to hop: PinnedRequest) throws(URLError) -> URLRequest? {
        guard let settings else { return nil }
        let decide: (@Sendable (HTTPURLResponse, URLRequest) -> URLRequest?)?
        switch settings.redirects {
        case .doNotFollow: return nil
        case .follow: decide = nil
        case .decide(let policy): decide = policy
        }
        guard var next = try Redirect.next(after: response, to: hop.unedited) else { return nil }
        credentials.apply(to: &next, cookieStorage: settings.cookieStorage)
        guard let decide else { return next }
        return decide(response, next)
    }

    /// Files the response's `Set-Cookie` fields under the hop's ORIGINAL URL, never a pinned address.
    private func storeCookies(from response: HTTPURLResponse, for hop: PinnedRequest) {
        guard hop.original.httpShouldHandleCookies, let storage = settings?.cookieStorage,
              storage.cookieAcceptPolicy != .never else { return }
        var fields: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        let cookies = HTTPCookie.cookies(withResponseHeaderFields: fields, for: hop.url)
        if !cookies.isEmpty { storage.setCookies(cookies, for: hop.url, mainDocumentURL: hop.original.mainDocumentURL) }
    }

    // MARK: TransferSink

    func attempting(_ address: IPAddress) {
        recorder?.attempting(address)
    }

    func received(_ response: HTTPURLResponse, from address: IPAddress?) {
        guard let (hop, hops) = state.withLock({ state -> (PinnedRequest, Int)? in
            guard !state.stopped, let hop = state.hop else { return nil }
            state.responded = true
            return (hop, state.hops)
        }) else { return }
        recorder?.responded(response.statusCode, from: address)
        let presented = hop.presenting(response)
        storeCookies(from: presented, for: hop)
        let redirect: URLRequest?
        do throws(URLError) {
            redirect = try self.redirect(after: presented, to: hop)
        } catch {
            state.withLock { $0.transfer }?.cancel()
            fail(error)
            state.withLock { $0.stopped = true }
            return
        }
        if let next = redirect {
            if case .follow(let maxHops) = settings?.redirects, hops >= maxHops {
                state.withLock { $0.transfer }?.cancel()
                fail(URLError(.httpTooManyRedirects, url: hop.url, description: "more than \(maxHops) redirects"))
                state.withLock { $0.stopped = true }
                return
            }
            // URLSession's rules changed the method to GET: the body stays behind. Otherwise it goes again,
            // which a stream (read once) cannot.
            let body = next.httpMethod == hop.unedited.httpMethod ? hop.body : .none
            guard body.isReplayable else {
                state.withLock { $0.transfer }?.cancel()
                fail(URLError(.requestBodyStreamExhausted, url: hop.url,
                              description: "a \(response.statusCode) redirect repeats the body, and a stream body cannot be read twice"))
                state.withLock { $0.stopped = true }
                return
            }
            state.withLock { state in
                state.following = (next, body)
                state.hops += 1
            }
            return
        }
        client.received(presented)
    }

    func received(_ data: Data) {
        guard state.withLock({ !$0.stopped && $0.following == nil }) else { return }
        recorder?.delivered(data.count)
        switch delivery {
        case .stream: client.loaded(data, flowControl: state.withLock { $0.waitForClient })
        case .buffer: state.withLock { $0.body.append(data) }
        }
    }

    func finished(with failure: TransferFailure?) {
        if let (next, body) = state.withLock({ $0.stopped ? nil : $0.following }) {
            load(next, body: body)  // the redirect's own body or error does not matter
            return
        }
        if let failure {
            // A connection that could not be made is worth another address; anything later is final.
            if case .connect = failure, !state.withLock({ $0.responded }), sendToNextAddress() { return }
            let error = failure.urlError
            let url = state.withLock { $0.hop?.url } ?? request.url
            fail(URLError(error.code, url: url, description: error.localizedDescription))
            return
        }
        guard !isStopped else { return }
        if delivery == .buffer {
            let body = state.withLock { state in
                defer { state.body = Data() }
                return state.body
            }
            if !body.isEmpty { client.loaded(body, flowControl: false) }
        }
        recorder?.finishWithResponse()
        client.finished()
    }
}

/// The protocol instance's client, called from the resolver task, the inner session's delegate queue
/// and the curl thread — always through the task's own work queue.
///
/// FoundationNetworking's protocols call their client on that queue, and the client relies on it: it
/// reads the session's task registry, which that queue mutates (calls from the curl thread and from the
/// inner session's delegate queue both crashed under benchmark load). So every call runs there, in
/// order, and is dropped once ``stop()`` (which Foundation calls on that queue) has run.
///
/// @unchecked Sendable: `URLProtocol` is explicitly not Sendable. `lock` guards `stopped` and every use
/// of `owner`; `queue` itself never changes.
final class ClientReference: @unchecked Sendable {
    // Weak: the protocol instance owns its load, which owns this reference.
    private weak let owner: PinnedURLProtocol?
    private let queue: DispatchQueue
    private let lock = NSLock()
    private var stopped = false
    /// Body bytes handed to `queue` but not yet given to the client; guarded by `lock`.
    private var pendingBytes = 0
    /// Above this backlog a flow-controlled transport waits for the work queue.
    private static let backlogLimit = 1 << 20

    /// - Parameter queue: The task's work queue (found by reflection in `startLoading`, which runs on it);
    ///   a private serial queue when there is none.
    init(_ owner: PinnedURLProtocol, queue: DispatchQueue?) {
        self.owner = owner
        self.queue = queue ?? DispatchQueue(label: "hostpin.client")
    }

    /// Drops every call not yet made. Call on the work queue (Foundation calls `stopLoading` there).
    func stop() {
        lock.withLock { stopped = true }
    }

    private func call(_ body: @escaping @Sendable (PinnedURLProtocol, any URLProtocolClient) -> Void) {
        queue.async { [self] in run(body) }
    }

    private func run(_ body: (PinnedURLProtocol, any URLProtocolClient) -> Void) {
        lock.withLock {
            guard !stopped, let owner, let client = owner.client else { return }
            body(owner, client)
        }
    }

    func received(_ response: HTTPURLResponse) {
        call { $1.urlProtocol($0, didReceive: response, cacheStoragePolicy: .notAllowed) }
    }

    /// Hands `data` to the client on `queue`. With `flowControl` (the curl thread) the caller waits
    /// whenever more than ``backlogLimit`` bytes are still queued, so curl reads no faster than the client
    /// takes the data; without it (the inner URLSession: waiting there would only move the backlog into
    /// its delegate queue, as FoundationNetworking drives that transfer on the same work queue) it never waits.
    func loaded(_ data: Data, flowControl: Bool) {
        let backlog = lock.withLock {
            pendingBytes += data.count
            return pendingBytes
        }
        let deliver: @Sendable () -> Void = { [self] in
            lock.withLock { pendingBytes -= data.count }
            run { $1.urlProtocol($0, didLoad: data) }
        }
        if flowControl && backlog > Self.backlogLimit { queue.sync(execute: deliver) } else { queue.async(execute: deliver) }
    }

    func finished() {
        call { $1.urlProtocolDidFinishLoading($0) }
    }

    func failed(with error: URLError) {
        call { $1.urlProtocol($0, didFailWithError: error) }
    }
}
