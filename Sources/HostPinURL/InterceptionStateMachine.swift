import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin

/// One intercepted request's logic, from `startLoading` to its end, as a value: the rules' decision, the
/// host's resolution (and the DNS-rebinding guard), the transfers to try (Happy Eyeballs order, the next
/// address when a connection cannot be made), redirect hops (the policy, the hop limit, credentials to
/// their origin only, header rules never across hosts), where cookies are filed, buffered or streamed
/// delivery, and `stopLoading` at any point.
///
/// It does no I/O and owns no thread: each event (`start()`, `resolved(_:)`, `receivedHead(_:)`, …)
/// returns the ``Action`` its driver (``PinnedLoad``) must perform, and the driver reports back what
/// happened as the next event, as swift-nio's `HTTP1ConnectionStateMachine` and AsyncHTTPClient's
/// request state machines do. So every transition can be driven by a test without a network. The
/// outside things it reads are the cookie storage, for the cookies a redirect hop carries (after the
/// driver has filed the redirect's own `Set-Cookie`: ``filedCookies()``), and the address ranking, if
/// any, for the order of a hop's addresses; it never runs the application's code (a `.decide` redirect policy is an action: ``Action/askPolicy(_:proposed:_:)``).
///
/// Guarantees, whatever the order of events: exactly one ending action (``Action/finish(body:)``,
/// ``Action/fail(_:began:cancelTransfer:)`` or ``Action/cancel(_:)``), and after it, or after `stop()`,
/// every event returns ``Action/none``: no callback after stop, no lost completion.
struct InterceptionStateMachine: Sendable {
    /// The installed settings the machine decides by.
    struct Configuration: Sendable {
        var rules: Rules
        var redirects: RedirectPolicy
        var cookieStorage: HTTPCookieStorage?
        var plainHTTP: PinnedURLProtocol.PlainHTTPTransport
        var allowPrivate: Bool
        var delivery: ResponseDelivery
        /// Whether a name's route allows it private addresses (``HostResolver/allowsPrivateAddresses(for:)``).
        var routeAllowsPrivate: @Sendable (HostName) -> Bool = { _ in false }
        /// Ranks a resolved name's addresses by verified connection time before Happy Eyeballs orders
        /// the families (``SharedAddressRanking/attemptOrder(_:for:port:happyEyeballs:at:)``); `nil`
        /// keeps the answer order.
        var ranking: SharedAddressRanking?
    }

    /// A hop under way: the request to send (rules' edits applied) and the rules that decided it.
    struct Hop: Sendable {
        let request: PinnedRequest
        let rules: [RuleReference]

        var start: HopStart { HopStart(url: request.presentedURL, fetchedURL: request.url, rules: rules) }
    }

    /// What the observer hears when a hop begins (``EventRecorder/beginHop(_:fetched:rules:)``).
    struct HopStart: Sendable, Equatable {
        let url: URL
        let fetchedURL: URL
        let rules: [RuleReference]
    }

    /// One transfer of a hop to some of its addresses.
    struct Transfer: Sendable, Equatable {
        /// The addresses this transfer may connect to, in the order to attempt them.
        let addresses: [IPAddress]
        /// `.urlSession` or `.libcurl`.
        let transport: PinnedURLProtocol.Transport
        /// Whether this transfer begins its hop (a `pin` rule's: no resolution came first).
        let beginsHop: Bool
        /// Every address of the hop in attempt order and where they came from, on the hop's first
        /// transfer; `nil` on the next address after a failed connection.
        let plan: AddressPlan?
    }

    struct AddressPlan: Sendable, Equatable {
        let addresses: [IPAddress]
        let source: PinnedURLProtocol.AddressSource
    }

    /// Where a response's `Set-Cookie` fields are filed: under the hop's ORIGINAL URL, never an address.
    struct CookieFiling: Sendable, Equatable {
        let url: URL
        let mainDocumentURL: URL?
    }

    /// What follows a response head the driver has passed on to ``Action/received(_:cookies:then:)``.
    enum HeadStep: Sendable {
        /// Hand the response to the client; its body follows.
        case deliver
        /// A redirect to follow, if the policy agrees: file the cookies, then call ``filedCookies()``.
        case considerRedirect
        /// Stop the transfer and fail the request.
        case fail(URLError)
    }

    enum Action: Sendable {
        case none
        /// A hop begins (tell the observer); resolve its host, then call ``resolved(_:)``.
        case resolve(Hop)
        /// Start a transfer of the hop; its events come back as ``receivedHead(_:)``,
        /// ``receivedData(_:)`` and ``transferFinished(_:)``.
        case send(Hop, Transfer)
        /// A hop begins whose host a `pass` rule names: send it with the system resolving the name.
        case sendResolvedBySystem(Hop)
        /// A hop begins that a rule answers (`respond`, or a `redirect` rule's 3xx): feed `response` and
        /// `body` back as a transfer's events.
        case answerLocally(Hop, HTTPURLResponse, body: Data)
        /// A response head in original-URL form: file its cookies (when `cookies` says where), then `step`.
        case received(HTTPURLResponse, cookies: CookieFiling?, then: HeadStep)
        /// Hand these body bytes to the client now.
        case deliver(Data)
        /// Body bytes kept for delivery at the end (count them for the observer).
        case buffered(Int)
        /// The request ended with its response: hand over `body` (buffered delivery) and finish.
        case finish(body: Data?)
        /// The request failed. `began`: a hop began and ended here (tell the observer first);
        /// `cancelTransfer`: a transfer is still running.
        case fail(URLError, began: HopStart?, cancelTransfer: Bool)
        /// `stopLoading`: cancel whatever runs; the observer hears `error`, the client nothing.
        case cancel(URLError)
        /// Ask the application's redirect policy (outside any lock: it is the application's code) and
        /// call ``policyDecided(_:)`` with its answer.
        case askPolicy(HTTPURLResponse, proposed: URLRequest, @Sendable (HTTPURLResponse, URLRequest) -> URLRequest?)
    }

    enum State: Sendable {
        /// Before `start()`.
        case idle
        /// Waiting for the hop's host to resolve.
        case resolving(Hop)
        /// A transfer (or a local answer) runs and no response head came yet; `current` are the running
        /// transfer's addresses, `remaining` the transfers still to try when it cannot connect.
        case connecting(Hop, current: [IPAddress], remaining: [[IPAddress]])
        /// A response head came that may be a redirect to follow: waiting for ``filedCookies()``.
        case redirecting(Hop, response: HTTPURLResponse, proposed: URLRequest)
        /// Waiting for the application's redirect policy: ``policyDecided(_:)``.
        case askingPolicy(Hop, response: HTTPURLResponse)
        /// The response went to the client; its body arrives (kept in `buffered` for buffered delivery).
        case receiving(Hop, buffered: Data)
        /// A redirect is followed once this hop's transfer ends (its body is dropped).
        case following(next: URLRequest, body: RequestBody)
        /// The ending action was returned.
        case finished
        /// `stop()` came.
        case stopped
        /// Transiently, while a payload is changed in place (no copy of a buffered body).
        case modifying
    }

    /// At most this many transparent redirects by rules for one hop; then `.httpTooManyRedirects`. (Loops
    /// between rules are refused when the rules load; this bounds whatever that check cannot see.)
    static let maxRuleRedirects = 16

    /// How a name with both A and AAAA addresses is connected to (RFC 8305): IPv6 first, IPv4 250 ms
    /// later if no connection yet, the first to connect wins (libcurl races them).
    static let happyEyeballs = HappyEyeballs()

    private(set) var state = State.idle
    /// Redirects followed so far.
    private(set) var hops = 0
    private let configuration: Configuration
    private let request: URLRequest
    private let body: RequestBody
    /// The application's `Authorization` and own `Cookie`, for redirect hops to their origin.
    private let credentials: OriginCredentials

    /// - Parameters:
    ///   - request: The application's request, as the protocol received it.
    ///   - body: Its body, wherever Foundation kept it.
    init(request: URLRequest, body: RequestBody, configuration: Configuration) {
        self.request = request
        self.body = body
        self.configuration = configuration
        credentials = OriginCredentials(of: request, cookieStorage: configuration.cookieStorage)
    }

    var isStopped: Bool {
        if case .stopped = state { return true }
        return false
    }

    // MARK: Events

    /// `startLoading`: decide the application's request.
    mutating func start() -> Action {
        guard case .idle = state else { return .none }
        return begin(request, body: body)
    }

    /// The hop's host resolved (or failed to).
    mutating func resolved(_ result: Result<Resolution, ResolutionError>) -> Action {
        guard case .resolving(let hop) = state else { return .none }
        let resolution: Resolution
        switch result {
        case .failure(let error): return fail(URLError(error, url: hop.request.url))
        case .success(let answer): resolution = answer
        }
        // The rebinding guard is about what DNS answers for a name: an IP literal or localhost is where
        // the application asked to go.
        let addresses: [IPAddress]
        if configuration.allowPrivate || resolution.name.literalAddress != nil || resolution.name.isLocalhost {
            addresses = resolution.ipAddresses
        } else {
            do throws(RebindingRefusal) {
                addresses = try RebindingGuard.admitted(resolution.ipAddresses, for: resolution.name)
            } catch {
                // A routed name whose route allows private addresses passes (asked only for a refusal).
                guard configuration.routeAllowsPrivate(resolution.name) else {
                    return fail(URLError.privateAddress(error, url: hop.request.url))
                }
                addresses = resolution.ipAddresses
            }
        }
        return send(hop, to: addresses, source: PinnedURLProtocol.AddressSource(resolution.source), beginsHop: false)
    }

    /// The running transfer's response head (a local answer's too).
    mutating func receivedHead(_ response: HTTPURLResponse) -> Action {
        guard case .connecting(let hop, _, _) = state else { return .none }
        let presented = hop.request.presenting(response)
        let cookies = cookieFiling(for: hop.request)
        if case .doNotFollow = configuration.redirects {
            state = .receiving(hop, buffered: Data())
            return .received(presented, cookies: cookies, then: .deliver)
        }
        let proposed: URLRequest?
        do throws(URLError) {
            proposed = try Redirect.next(after: presented, to: hop.request.unedited)
        } catch {
            state = .finished
            return .received(presented, cookies: cookies, then: .fail(error))
        }
        guard let proposed else {
            state = .receiving(hop, buffered: Data())
            return .received(presented, cookies: cookies, then: .deliver)
        }
        state = .redirecting(hop, response: presented, proposed: proposed)
        return .received(presented, cookies: cookies, then: .considerRedirect)
    }

    /// The driver filed the redirect's cookies (or had none to file): the next hop may now carry them.
    /// With `.follow`, follows the redirect (then ``transferFinished(_:)`` starts the next hop) or fails:
    /// more than `maxHops`, or a body that cannot be sent again. With `.decide`, asks the policy first.
    mutating func filedCookies() -> Action {
        guard case .redirecting(let hop, let response, var proposed) = state else { return .none }
        credentials.apply(to: &proposed, cookieStorage: configuration.cookieStorage)
        switch configuration.redirects {
        case .follow: return follow(proposed, after: response, on: hop)
        case .decide(let policy):
            state = .askingPolicy(hop, response: response)
            return .askPolicy(response, proposed: proposed, policy)
        case .doNotFollow: return deliver(response, on: hop)  // receivedHead proposes no redirect then
        }
    }

    /// The application's redirect policy answered: follow `next`, or hand the 3xx to the client (`nil`).
    mutating func policyDecided(_ next: URLRequest?) -> Action {
        guard case .askingPolicy(let hop, let response) = state else { return .none }
        guard let next else { return deliver(response, on: hop) }
        return follow(next, after: response, on: hop)
    }

    /// Body bytes of the running transfer.
    mutating func receivedData(_ data: Data) -> Action {
        guard case .receiving(let hop, var buffered) = state else { return .none }  // a followed redirect's body is dropped
        switch configuration.delivery {
        case .stream:
            return .deliver(data)
        case .buffer:
            state = .modifying  // `buffered` is the only reference now: append without a copy
            buffered.append(data)
            state = .receiving(hop, buffered: buffered)
            return .buffered(data.count)
        }
    }

    /// The running transfer ended: `nil` on success, else why it failed.
    mutating func transferFinished(_ failure: TransferFailure?) -> Action {
        switch state {
        case .following(let next, let body):
            return begin(next, body: body)  // the redirect's own body or error does not matter
        case .connecting(let hop, let current, var remaining):
            guard let failure else {
                return fail(URLError(.badServerResponse, url: hop.request.url, description: "the transfer ended without a response"))
            }
            // A certificate that failed the check for the name (a likely sinkhole) came in the handshake,
            // before any byte of the request: the same transfer's other addresses are tried without it.
            if case .certificate(_, let address) = failure {
                let others = current.filter { $0 != address }
                if !others.isEmpty, others.count < current.count {
                    state = .connecting(hop, current: others, remaining: remaining)
                    return .send(hop, Transfer(addresses: others, transport: transport(for: hop.request, to: others),
                                               beginsHop: false, plan: nil))
                }
            }
            // A connection that could not be made is worth another address; anything later is final.
            switch failure {
            case .connect, .certificate:
                guard !remaining.isEmpty else { break }
                let addresses = remaining.removeFirst()
                state = .connecting(hop, current: addresses, remaining: remaining)
                return .send(hop, Transfer(addresses: addresses, transport: transport(for: hop.request, to: addresses),
                                           beginsHop: false, plan: nil))
            case .transfer:
                break
            }
            return fail(URLError(failure.urlError.code, url: hop.request.url, description: failure.urlError.localizedDescription))
        case .receiving(let hop, let buffered):
            if let failure {
                return fail(URLError(failure.urlError.code, url: hop.request.url, description: failure.urlError.localizedDescription))
            }
            state = .finished
            return .finish(body: buffered.isEmpty ? nil : buffered)
        case .redirecting(let hop, _, _), .askingPolicy(let hop, _):
            // The driver decides the redirect before the transfer can end; should it not, nothing is lost.
            return fail(URLError(.badServerResponse, url: hop.request.url, description: "the redirect was never decided"))
        case .idle, .resolving, .finished, .stopped, .modifying:
            return .none
        }
    }

    /// `stopLoading`: nothing more reaches the client.
    mutating func stop() -> Action {
        switch state {
        case .finished, .stopped:
            state = .stopped
            return .none
        case .idle, .resolving, .connecting, .redirecting, .askingPolicy, .receiving, .following, .modifying:
            state = .stopped
            return .cancel(URLError(.cancelled, url: request.url, description: "the task was cancelled"))
        }
    }

    // MARK: Steps

    /// Decides `hop` by the rules (following transparent redirects, each target decided again) and
    /// returns what starts it: fail a blocked request, answer locally, pass it to the system's
    /// resolution, resolve its host, or send it to a pin rule's addresses, with the header rules' edits.
    private mutating func begin(_ hop: URLRequest, body: RequestBody) -> Action {
        let url = hop.url
        var sent = hop
        var decision = decide(sent)
        var decidedBy = decision.rule.map { [$0] } ?? []
        var rewrites = 0
        while case .redirect(let redirect) = decision, redirect.isTransparent {
            rewrites += 1
            guard rewrites <= Self.maxRuleRedirects else {
                return fail(URLError(.httpTooManyRedirects, url: url,
                                     description: "the rules redirected \(url?.absoluteString ?? "the request") more than "
                                         + "\(Self.maxRuleRedirects) times (last by \(redirect.rule))"),
                            began: url.map { HopStart(url: $0, fetchedURL: redirect.target, rules: decidedBy) })
            }
            sent.url = redirect.target
            sent.setValue(nil, forHTTPHeaderField: "Host")
            credentials.apply(to: &sent, cookieStorage: configuration.cookieStorage)
            decision = decide(sent)
            if let rule = decision.rule { decidedBy.append(rule) }
        }
        var edited = sent
        if case .send(_, let edits) = decision { edited.apply(edits) }
        guard let url, let pinned = PinnedRequest(edited, body: body, unedited: sent, presentedURL: url) else {
            return fail(URLError(.badURL, url: url, description: "the URL has no host"))
        }
        let hop = Hop(request: pinned, rules: decidedBy)
        switch decision {
        case .block(let rule):
            return fail(URLError.blocked(by: rule, url: pinned.url), began: hop.start)
        case .respond(let response):
            return answerLocally(hop, status: response.status, headers: response.headers, body: response.body)
        case .redirect(let redirect):
            return answerLocally(hop, status: redirect.status ?? 302,
                                 headers: [("Location", redirect.target.absoluteString), ("Content-Length", "0")], body: Data())
        case .pass(.rule):
            state = .connecting(hop, current: [], remaining: [])
            return .sendResolvedBySystem(hop)
        case .send(.pinned(let addresses, _), _):
            return send(hop, to: addresses, source: .pinned, beginsHop: true)
        case .send(.resolve, _), .pass(.addressLiteral), .pass(.localhost):
            state = .resolving(hop)
            return .resolve(hop)
        }
    }

    /// Hands the 3xx to the client, its body following.
    private mutating func deliver(_ response: HTTPURLResponse, on hop: Hop) -> Action {
        state = .receiving(hop, buffered: Data())
        return .received(response, cookies: nil, then: .deliver)
    }

    /// Follows `next` once this hop's transfer ends, unless over the hop limit or its body cannot go again.
    private mutating func follow(_ next: URLRequest, after response: HTTPURLResponse, on hop: Hop) -> Action {
        if case .follow(let maxHops) = configuration.redirects, hops >= maxHops {
            return fail(URLError(.httpTooManyRedirects, url: hop.request.url, description: "more than \(maxHops) redirects"),
                        cancelTransfer: true)
        }
        // URLSession's rules changed the method to GET: the body stays behind. Otherwise it goes again,
        // which a stream (read once) cannot.
        let body = next.httpMethod == hop.request.unedited.httpMethod ? hop.request.body : .none
        guard body.isReplayable else {
            return fail(URLError(.requestBodyStreamExhausted, url: hop.request.url,
                                 description: "a \(response.statusCode) redirect repeats the body, and a stream body cannot be read twice"),
                        cancelTransfer: true)
        }
        hops += 1
        state = .following(next: next, body: body)
        return .none
    }

    /// What the rules say about `request`; without rules (the common case) the request is sent unedited,
    /// without building the policy's view of it.
    private func decide(_ request: URLRequest) -> PolicyDecision {
        guard !configuration.rules.isEmpty, let policy = PolicyRequest(request) else { return .send(.resolve, headerEdits: []) }
        return configuration.rules.decide(policy)
    }

    /// A response made here goes through the same path as a transfer's: the redirect policy, cookies and
    /// the original URL all apply.
    private mutating func answerLocally(_ hop: Hop, status: Int, headers: [(name: String, value: String)], body: Data) -> Action {
        var fields: [String: String] = [:]
        for (name, value) in headers { fields[name] = fields[name].map { "\($0), \(value)" } ?? value }
        guard let response = HTTPURLResponse(url: hop.request.url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)
        else {
            return fail(URLError(.badServerResponse, url: hop.request.url, description: "a rule's response could not be built"),
                        began: hop.start)
        }
        state = .connecting(hop, current: [], remaining: [])
        return .answerLocally(hop, response, body: body)
    }

    /// Sends `hop` to the first of its transfers, keeping the rest for when a connection cannot be made.
    private mutating func send(_ hop: Hop, to addresses: [IPAddress], source: PinnedURLProtocol.AddressSource,
                               beginsHop: Bool) -> Action {
        var attempts = attempts(for: hop.request, to: addresses)
        guard !attempts.isEmpty else {
            return fail(URLError(.cannotConnectToHost, url: hop.request.url, description: "\(hop.request.host) has no address to connect to"),
                        began: beginsHop ? hop.start : nil)
        }
        let first = attempts.removeFirst()
        state = .connecting(hop, current: first, remaining: attempts)
        return .send(hop, Transfer(addresses: first, transport: transport(for: hop.request, to: first), beginsHop: beginsHop,
                                   plan: AddressPlan(addresses: ([first] + attempts).flatMap { $0 }, source: source)))
    }

    /// The transfers to try for `request`, in order, each with the addresses it may connect to. Through
    /// the inner URLSession (plain HTTP to IPv4 addresses only, by default) one address per transfer,
    /// the next when one cannot connect: URLSession reports no connection before the response, so racing
    /// addresses there would send the request twice. Through libcurl (HTTPS, any IPv6 address — so every
    /// name with both A and AAAA —, or plain HTTP when the settings ask) one transfer with every address
    /// in Happy Eyeballs order, which curl races itself (``CurlPinning``). With a ranking, the addresses
    /// are ranked first (fastest verified first, those excluded for the name as sinkholes dropped) and
    /// the family of a measured top address is the one raced first.
    private func attempts(for request: PinnedRequest, to addresses: [IPAddress]) -> [[IPAddress]] {
        let ordered: [IPAddress]
        if let ranking = configuration.ranking, let port = UInt16(exactly: request.port) {
            ordered = ranking.attemptOrder(addresses, for: request.rankingName, port: port, happyEyeballs: Self.happyEyeballs)
        } else {
            ordered = usesInnerSession(request, to: addresses) ? addresses : Self.happyEyeballs.order(addresses)
        }
        if usesInnerSession(request, to: ordered) { return ordered.map { [$0] } }
        return ordered.isEmpty ? [] : [ordered]
    }

    /// libcurl for HTTPS (SNI and the certificate check must use the name), for IPv6 addresses
    /// (FoundationNetworking rejects IPv6-literal URLs: URL and curl disagree on the bracketed host), and
    /// for plain HTTP when the settings ask for it; the inner URLSession for plain HTTP to IPv4 otherwise.
    private func transport(for request: PinnedRequest, to addresses: [IPAddress]) -> PinnedURLProtocol.Transport {
        usesInnerSession(request, to: addresses) ? .urlSession : .libcurl
    }

    private func usesInnerSession(_ request: PinnedRequest, to addresses: [IPAddress]) -> Bool {
        request.url.scheme?.lowercased() != "https" && configuration.plainHTTP == .urlSession
            && addresses.allSatisfy { $0.family == .v4 }
    }

    /// Where `Set-Cookie` of `hop`'s response goes; `nil` when the request handles no cookies or there
    /// is no storage taking them.
    private func cookieFiling(for hop: PinnedRequest) -> CookieFiling? {
        guard hop.original.httpShouldHandleCookies, let storage = configuration.cookieStorage,
              storage.cookieAcceptPolicy != .never else { return nil }
        return CookieFiling(url: hop.url, mainDocumentURL: hop.original.mainDocumentURL)
    }

    private mutating func fail(_ error: URLError, began: HopStart? = nil, cancelTransfer: Bool = false) -> Action {
        state = .finished
        return .fail(error, began: began, cancelTransfer: cancelTransfer)
    }
}
