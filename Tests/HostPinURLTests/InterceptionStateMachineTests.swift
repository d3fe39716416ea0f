import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
@testable import HostPinURL
import Testing

/// The interceptor's per-request state machine, driven event by event without a network: the actions
/// each event returns are what the driver (`PinnedLoad`) would perform.
@Suite struct InterceptionStateMachineTests {
    typealias Machine = InterceptionStateMachine

    // MARK: Fixtures

    static func machine(_ url: String, method: String = "GET", headers: [String: String] = [:], body: RequestBody = .none,
                        rules: String? = nil, redirects: RedirectPolicy = .default, cookieStorage: HTTPCookieStorage? = nil,
                        plainHTTP: PinnedURLProtocol.PlainHTTPTransport = .urlSession, allowPrivate: Bool = true,
                        delivery: ResponseDelivery = .stream,
                        routeAllowsPrivate: @escaping @Sendable (HostName) -> Bool = { _ in false },
                        ranking: SharedAddressRanking? = nil) throws -> Machine {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let parsed = try rules.map { try Rules(json: Data("{\"rules\": [\($0)]}".utf8), relativeTo: URL(fileURLWithPath: "/")) } ?? Rules()
        return Machine(request: request, body: body, configuration: .init(
            rules: parsed, redirects: redirects, cookieStorage: cookieStorage, plainHTTP: plainHTTP,
            allowPrivate: allowPrivate, delivery: delivery, routeAllowsPrivate: routeAllowsPrivate, ranking: ranking))
    }

    static func resolution(_ name: String, _ addresses: [String], source: Resolution.Source = .upstream) throws -> Result<Resolution, ResolutionError> {
        .success(Resolution(name: try HostName.parse(name),
                            addresses: try addresses.map { ResolvedAddress(address: try #require(IPAddress($0)), ttl: 60) },
                            cnames: [], upstream: nil, source: source, receivedAt: Date()))
    }

    static func response(_ url: URL, _ status: Int, _ headers: [String: String] = [:]) throws -> HTTPURLResponse {
        try #require(HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers))
    }

    static func addresses(_ list: String...) -> [IPAddress] { list.compactMap(IPAddress.init) }

    static let refused = TransferFailure.connect(URLError(.cannotConnectToHost))

    /// The hop a `.resolve` action names; fails the test on any other action.
    static func resolving(_ action: Machine.Action, sourceLocation: SourceLocation = #_sourceLocation) throws -> Machine.Hop {
        guard case .resolve(let hop) = action else {
            Issue.record("expected .resolve, got \(action)", sourceLocation: sourceLocation)
            throw Unexpected()
        }
        return hop
    }

    static func sending(_ action: Machine.Action, sourceLocation: SourceLocation = #_sourceLocation) throws -> (Machine.Hop, Machine.Transfer) {
        guard case .send(let hop, let transfer) = action else {
            Issue.record("expected .send, got \(action)", sourceLocation: sourceLocation)
            throw Unexpected()
        }
        return (hop, transfer)
    }

    static func failure(_ action: Machine.Action, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> (URLError, began: Machine.HopStart?, cancelTransfer: Bool) {
        guard case .fail(let error, let began, let cancel) = action else {
            Issue.record("expected .fail, got \(action)", sourceLocation: sourceLocation)
            throw Unexpected()
        }
        return (error, began, cancel)
    }

    static func head(_ action: Machine.Action, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> (HTTPURLResponse, cookies: Machine.CookieFiling?, then: Machine.HeadStep) {
        guard case .received(let response, let cookies, let step) = action else {
            Issue.record("expected .received, got \(action)", sourceLocation: sourceLocation)
            throw Unexpected()
        }
        return (response, cookies, step)
    }

    struct Unexpected: Error {}

    static func isNone(_ action: Machine.Action) -> Bool {
        if case .none = action { return true }
        return false
    }

    /// Resolves and starts the first transfer of a fresh machine for `url`.
    static func connected(_ url: String, to list: [String] = ["192.0.2.1"], _ configure: (inout Machine) -> Void = { _ in },
                          machine: Machine? = nil) throws -> Machine {
        var machine = try machine ?? Self.machine(url)
        let hop = try resolving(machine.start())
        _ = try sending(machine.resolved(resolution(hop.request.host, list)))
        return machine
    }

    // MARK: A plain request

    @Test func plainRequestResolvesSendsStreamsAndFinishesOnce() throws {
        var machine = try Self.machine("http://www.example.test:8080/page")
        let hop = try Self.resolving(machine.start())
        #expect(hop.request.host == "www.example.test")
        #expect(hop.start == Machine.HopStart(url: URL(string: "http://www.example.test:8080/page")!,
                                              fetchedURL: URL(string: "http://www.example.test:8080/page")!, rules: []))
        #expect(Self.isNone(machine.start()))  // a second start does nothing
        let (sent, transfer) = try Self.sending(machine.resolved(Self.resolution("www.example.test", ["192.0.2.1"], source: .cache)))
        #expect(sent.request.url.absoluteString == "http://www.example.test:8080/page")
        #expect(transfer == Machine.Transfer(addresses: Self.addresses("192.0.2.1"), transport: .urlSession, beginsHop: false,
                                             plan: .init(addresses: Self.addresses("192.0.2.1"), source: .cache)))
        let (response, cookies, step) = try Self.head(machine.receivedHead(Self.response(URL(string: "http://192.0.2.1:8080/page")!, 200)))
        #expect(response.url?.absoluteString == "http://www.example.test:8080/page")  // never the address
        #expect(cookies == nil)  // no cookie storage
        guard case .deliver = step else { Issue.record("expected .deliver, got \(step)"); return }
        guard case .deliver(let data) = machine.receivedData(Data("abc".utf8)) else { Issue.record("expected .deliver"); return }
        #expect(data == Data("abc".utf8))
        guard case .finish(let body) = machine.transferFinished(nil) else { Issue.record("expected .finish"); return }
        #expect(body == nil)
        // Ended: nothing more comes out, a stop included.
        #expect(Self.isNone(machine.receivedData(Data("late".utf8))))
        #expect(Self.isNone(machine.transferFinished(nil)))
        #expect(Self.isNone(machine.stop()))
    }

    @Test func bufferedDeliveryHandsTheWholeBodyOverOnceAtTheEnd() throws {
        var machine = try Self.connected("http://www.example.test/", machine: Self.machine("http://www.example.test/", delivery: .buffer))
        _ = try Self.head(machine.receivedHead(Self.response(URL(string: "http://192.0.2.1/")!, 200)))
        guard case .buffered(3) = machine.receivedData(Data("abc".utf8)), case .buffered(2) = machine.receivedData(Data("de".utf8))
        else { Issue.record("expected .buffered"); return }
        guard case .finish(let body) = machine.transferFinished(nil) else { Issue.record("expected .finish"); return }
        #expect(body == Data("abcde".utf8))
    }

    @Test func cookiesAreFiledUnderTheOriginalURLOnlyWhenTheRequestHandlesThem() throws {
        let storage = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "hostpin-machine-\(UUID().uuidString)")
        var machine = try Self.connected("http://www.example.test/a",
                                         machine: Self.machine("http://www.example.test/a", cookieStorage: storage))
        let (_, cookies, _) = try Self.head(machine.receivedHead(Self.response(URL(string: "http://192.0.2.1/a")!, 200, ["Set-Cookie": "a=1"])))
        #expect(cookies == Machine.CookieFiling(url: URL(string: "http://www.example.test/a")!, mainDocumentURL: nil))
        storage.cookieAcceptPolicy = .never
        var refusing = try Self.connected("http://www.example.test/a",
                                          machine: Self.machine("http://www.example.test/a", cookieStorage: storage))
        #expect(try Self.head(refusing.receivedHead(Self.response(URL(string: "http://192.0.2.1/a")!, 200))).cookies == nil)
    }

    @Test func aTransferEndingWithoutAResponseFailsRatherThanFinishingEmpty() throws {
        var machine = try Self.connected("http://www.example.test/")
        let (error, _, cancel) = try Self.failure(machine.transferFinished(nil))
        #expect(error.code == .badServerResponse)
        #expect(!cancel)
    }

    @Test func aURLWithoutAHostFailsAsABadURL() throws {
        var machine = try Self.machine("http:/path-only")
        let (error, began, _) = try Self.failure(machine.start())
        #expect(error.code == .badURL)
        #expect(began == nil)
    }

    @Test func aTransferEndingBeforeTheRedirectWasDecidedStillEndsTheRequest() throws {
        var machine = try Self.connected("http://www.example.test/")
        _ = try Self.head(machine.receivedHead(Self.response(URL(string: "http://192.0.2.1/")!, 302, ["Location": "/b"])))
        let (error, _, _) = try Self.failure(machine.transferFinished(nil))
        #expect(error.code == .badServerResponse)
        #expect(Self.isNone(machine.filedCookies()))
    }

    // MARK: Resolution, failover, Happy Eyeballs

    @Test func resolutionFailureFailsWithTheResolversCode() throws {
        var machine = try Self.machine("https://gone.example.test/")
        _ = try Self.resolving(machine.start())
        let (error, began, _) = try Self.failure(machine.resolved(.failure(.nxdomain(try HostName.parse("gone.example.test")))))
        #expect(error.code == .cannotFindHost)
        #expect(error.failingURL?.absoluteString == "https://gone.example.test/")
        #expect(began == nil)  // the hop began at .resolve
    }

    @Test func failoverTriesEachIPv4AddressInTurnThenFailsWithCannotConnect() throws {
        var machine = try Self.machine("http://www.example.test/")
        _ = try Self.resolving(machine.start())
        let (_, first) = try Self.sending(machine.resolved(Self.resolution("www.example.test", ["192.0.2.1", "192.0.2.2", "192.0.2.3"])))
        #expect(first.addresses == Self.addresses("192.0.2.1"))
        #expect(first.plan?.addresses == Self.addresses("192.0.2.1", "192.0.2.2", "192.0.2.3"))
        let (_, second) = try Self.sending(machine.transferFinished(Self.refused))
        #expect(second == Machine.Transfer(addresses: Self.addresses("192.0.2.2"), transport: .urlSession, beginsHop: false, plan: nil))
        let (_, third) = try Self.sending(machine.transferFinished(Self.refused))
        #expect(third.addresses == Self.addresses("192.0.2.3"))
        let (error, _, cancel) = try Self.failure(machine.transferFinished(Self.refused))
        #expect(error.code == .cannotConnectToHost)
        #expect(error.failingURL?.absoluteString == "http://www.example.test/")
        #expect(!cancel)
        #expect(Self.isNone(machine.transferFinished(Self.refused)))
    }

    /// A certificate for another name at the first of libcurl's addresses (a sinkhole): the same hop is
    /// sent again to the transfer's other addresses, then fails as untrusted when none is left.
    @Test func certificateRefusedMovesOnToTheTransfersOtherAddresses() throws {
        var machine = try Self.machine("https://www.example.test/")
        _ = try Self.resolving(machine.start())
        let (_, first) = try Self.sending(machine.resolved(Self.resolution("www.example.test", ["192.0.2.66", "192.0.2.1", "192.0.2.2"])))
        #expect(first.addresses == Self.addresses("192.0.2.66", "192.0.2.1", "192.0.2.2"))
        let untrusted = URLError(.serverCertificateUntrusted)
        let (_, second) = try Self.sending(machine.transferFinished(.certificate(untrusted, address: first.addresses[0])))
        #expect(second == Machine.Transfer(addresses: Self.addresses("192.0.2.1", "192.0.2.2"), transport: .libcurl,
                                           beginsHop: false, plan: nil))
        let (_, third) = try Self.sending(machine.transferFinished(.certificate(untrusted, address: second.addresses[1])))
        #expect(third.addresses == Self.addresses("192.0.2.1"))
        let (error, _, _) = try Self.failure(machine.transferFinished(.certificate(untrusted, address: third.addresses[0])))
        #expect(error.code == .serverCertificateUntrusted)
        #expect(error.failingURL?.absoluteString == "https://www.example.test/")
    }

    @Test func rankingOrdersTheAttemptsAndDropsExcludedAddresses() throws {
        let ranking = SharedAddressRanking()
        let answer = Self.addresses("192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.66")
        ranking.record(.milliseconds(40), to: answer[1], port: 443)
        ranking.record(.milliseconds(5), to: answer[2], port: 443)
        ranking.record(.milliseconds(1), to: answer[3], port: 443)
        ranking.exclude(answer[3], for: "www.example.test")
        var machine = try Self.machine("https://WWW.Example.test/", ranking: ranking)
        _ = try Self.resolving(machine.start())
        let (_, transfer) = try Self.sending(machine.resolved(Self.resolution("www.example.test", answer.map(\.description))))
        #expect(transfer.addresses == Self.addresses("192.0.2.3", "192.0.2.2", "192.0.2.1"))
        // Plain HTTP through the inner URLSession: one address per transfer, in the ranked order.
        var plain = try Self.machine("http://www.example.test/", ranking: ranking)
        ranking.record(.milliseconds(2), to: answer[0], port: 80)
        _ = try Self.resolving(plain.start())
        let (_, firstPlain) = try Self.sending(plain.resolved(Self.resolution("www.example.test", answer.map(\.description))))
        #expect(firstPlain.addresses == Self.addresses("192.0.2.1"))
        #expect(firstPlain.plan?.addresses == Self.addresses("192.0.2.1", "192.0.2.2", "192.0.2.3"))
    }

    @Test func aResolutionWithNoAddressFailsWithCannotConnect() throws {
        var machine = try Self.machine("http://www.example.test/")
        _ = try Self.resolving(machine.start())
        let (error, _, _) = try Self.failure(machine.resolved(Self.resolution("www.example.test", [])))
        #expect(error.code == .cannotConnectToHost)
    }

    @Test func aFailureOtherThanConnectingIsNotRetriedOnTheNextAddress() throws {
        var machine = try Self.machine("http://www.example.test/")
        _ = try Self.resolving(machine.start())
        _ = try Self.sending(machine.resolved(Self.resolution("www.example.test", ["192.0.2.1", "192.0.2.2"])))
        let (error, _, _) = try Self.failure(machine.transferFinished(.transfer(URLError(.timedOut))))
        #expect(error.code == .timedOut)
    }

    @Test func aFailureAfterTheResponseHeadIsFinalEvenForAConnectError() throws {
        var machine = try Self.machine("http://www.example.test/")
        _ = try Self.resolving(machine.start())
        _ = try Self.sending(machine.resolved(Self.resolution("www.example.test", ["192.0.2.1", "192.0.2.2"])))
        _ = try Self.head(machine.receivedHead(Self.response(URL(string: "http://192.0.2.1/")!, 200)))
        let (error, _, _) = try Self.failure(machine.transferFinished(Self.refused))
        #expect(error.code == .cannotConnectToHost)
    }

    @Test func bothFamiliesGoToOneLibcurlTransferInHappyEyeballsOrder() throws {
        var machine = try Self.machine("http://www.example.test/")
        _ = try Self.resolving(machine.start())
        let (_, transfer) = try Self.sending(machine.resolved(Self.resolution("www.example.test",
                                                                            ["192.0.2.1", "192.0.2.2", "2001:db8::1", "2001:db8::2"])))
        #expect(transfer.transport == .libcurl)
        #expect(transfer.addresses == Self.addresses("2001:db8::1", "192.0.2.1", "2001:db8::2", "192.0.2.2"))
        // curl raced them all: when none connects there is nothing left to try.
        let (error, _, _) = try Self.failure(machine.transferFinished(Self.refused))
        #expect(error.code == .cannotConnectToHost)
    }

    @Test func httpsAndPlainHTTPOverLibcurlRaceEveryAddressInOneTransfer() throws {
        for (url, plainHTTP) in [("https://www.example.test/", PinnedURLProtocol.PlainHTTPTransport.urlSession),
                                 ("http://www.example.test/", .libcurl)] {
            var machine = try Self.machine(url, plainHTTP: plainHTTP)
            _ = try Self.resolving(machine.start())
            let (_, transfer) = try Self.sending(machine.resolved(Self.resolution("www.example.test", ["192.0.2.1", "192.0.2.2"])))
            #expect(transfer.transport == .libcurl)
            #expect(transfer.addresses == Self.addresses("192.0.2.1", "192.0.2.2"))
        }
    }

    @Test func theRebindingGuardDropsPrivateAddressesAndRefusesANameWithNoOther() throws {
        var mixed = try Self.machine("http://www.example.test/", allowPrivate: false)
        _ = try Self.resolving(mixed.start())
        // (192.0.2.0/24 is special-purpose too, RFC 5737: a global address stands in; nothing is sent.)
        let (_, transfer) = try Self.sending(mixed.resolved(Self.resolution("www.example.test", ["127.0.0.10", "93.184.215.14"])))
        #expect(transfer.plan?.addresses == Self.addresses("93.184.215.14"))
        var rebound = try Self.machine("http://www.example.test/", allowPrivate: false)
        _ = try Self.resolving(rebound.start())
        let (error, _, _) = try Self.failure(rebound.resolved(Self.resolution("www.example.test", ["127.0.0.10"])))
        #expect(error.code == .resourceUnavailable)
        #expect(error.localizedDescription.contains("127.0.0.10"))
        // A literal is where the application asked to go: never guarded.
        var literal = try Self.machine("http://[::1]:8080/", allowPrivate: false)
        _ = try Self.resolving(literal.start())
        let (_, literalTransfer) = try Self.sending(literal.resolved(Self.resolution("::1", ["::1"], source: .literal)))
        #expect(literalTransfer.addresses == Self.addresses("::1"))
    }

    /// Split DNS: a name whose route allows private addresses passes the guard; another does not.
    @Test func theRebindingGuardLetsARoutedNameThroughAndStillRefusesAPublicOne() throws {
        let corp = try HostName.parse("corp.test")
        let routed: @Sendable (HostName) -> Bool = { $0.text.hasSuffix(".corp.test") || $0 == corp }
        var internalName = try Self.machine("http://www.corp.test/", allowPrivate: false, routeAllowsPrivate: routed)
        _ = try Self.resolving(internalName.start())
        let (_, transfer) = try Self.sending(internalName.resolved(Self.resolution("www.corp.test", ["10.1.2.3"])))
        #expect(transfer.addresses == Self.addresses("10.1.2.3"))
        var publicName = try Self.machine("http://www.example.test/", allowPrivate: false, routeAllowsPrivate: routed)
        _ = try Self.resolving(publicName.start())
        let (error, _, _) = try Self.failure(publicName.resolved(Self.resolution("www.example.test", ["10.1.2.3"])))
        #expect(error.code == .resourceUnavailable)
    }

    // MARK: Rules

    @Test func blockRuleFailsAtOnceNamingTheRule() throws {
        var machine = try Self.machine("http://ads.example.test/x", rules: #"{"action": "block", "host": "ads.example.test"}"#)
        let (error, began, cancel) = try Self.failure(machine.start())
        #expect(error.code == .resourceUnavailable)
        #expect(error.localizedDescription == "blocked by rules[0] (block host ads.example.test)")
        #expect(began?.rules.map(\.description) == ["rules[0] (block host ads.example.test)"])
        #expect(!cancel)
        #expect(Self.isNone(machine.stop()))
    }

    @Test func respondRuleAnswersLocallyThroughTheResponsePath() throws {
        var machine = try Self.machine("http://api.example.test/v1/status",
                                       rules: #"{"action": "respond", "urlPrefix": "http://api.example.test/v1/", "status": 503, "body": "down\n"}"#)
        guard case .answerLocally(let hop, let response, let body) = machine.start() else { Issue.record("expected .answerLocally"); return }
        #expect(response.statusCode == 503)
        #expect(body == Data("down\n".utf8))
        #expect(hop.rules.count == 1)
        _ = try Self.head(machine.receivedHead(response))
        guard case .deliver = machine.receivedData(body), case .finish = machine.transferFinished(nil) else {
            Issue.record("expected the local body delivered and finished"); return
        }
    }

    @Test func pinRuleSendsToItsAddressesWithoutResolving() throws {
        var machine = try Self.machine("http://api.example.test/",
                                       rules: #"{"action": "pin", "host": "api.example.test", "addresses": ["192.0.2.7", "192.0.2.8"]}"#)
        let (hop, transfer) = try Self.sending(machine.start())
        #expect(hop.request.host == "api.example.test")
        #expect(transfer == Machine.Transfer(addresses: Self.addresses("192.0.2.7"), transport: .urlSession, beginsHop: true,
                                             plan: .init(addresses: Self.addresses("192.0.2.7", "192.0.2.8"), source: .pinned)))
    }

    @Test func transparentRedirectRuleFetchesTheTargetUnderTheOriginalURL() throws {
        var machine = try Self.machine("http://www.example.test/style.css", headers: ["Authorization": "Bearer t"],
                                       rules: #"{"action": "redirect", "url": "http://www.example.test/style.css", "to": "http://cdn.example.test/clean.css"}"#)
        let hop = try Self.resolving(machine.start())
        #expect(hop.request.url.absoluteString == "http://cdn.example.test/clean.css")
        #expect(hop.request.presentedURL.absoluteString == "http://www.example.test/style.css")
        #expect(hop.request.original.value(forHTTPHeaderField: "Authorization") == nil)  // another origin
        _ = try Self.sending(machine.resolved(Self.resolution("cdn.example.test", ["192.0.2.9"])))
        let (response, _, _) = try Self.head(machine.receivedHead(Self.response(URL(string: "http://192.0.2.9/clean.css")!, 200)))
        #expect(response.url?.absoluteString == "http://www.example.test/style.css")
    }

    @Test func redirectRuleWithAStatusAnswersA3xxThatIsFollowed() throws {
        var machine = try Self.machine("http://www.example.test/old",
                                       rules: #"{"action": "redirect", "url": "http://www.example.test/old", "to": "http://cdn.example.test/new", "status": 307}"#)
        guard case .answerLocally(_, let response, _) = machine.start() else { Issue.record("expected .answerLocally"); return }
        #expect(response.statusCode == 307)
        guard case .considerRedirect = try Self.head(machine.receivedHead(response)).then else { Issue.record("expected a redirect"); return }
        #expect(Self.isNone(machine.filedCookies()))
        let next = try Self.resolving(machine.transferFinished(nil))
        #expect(next.request.url.absoluteString == "http://cdn.example.test/new")
        #expect(machine.hops == 1)
    }

    @Test func passRuleOnARedirectHopIsSentWithTheSystemResolving() throws {
        var machine = try Self.connected("http://www.example.test/", machine: Self.machine(
            "http://www.example.test/", rules: #"{"action": "pass", "host": "intranet.example.test"}"#))
        _ = try Self.head(machine.receivedHead(Self.response(URL(string: "http://192.0.2.1/")!, 302, ["Location": "http://intranet.example.test/"])))
        _ = machine.filedCookies()
        guard case .sendResolvedBySystem(let hop) = machine.transferFinished(nil) else { Issue.record("expected .sendResolvedBySystem"); return }
        #expect(hop.request.host == "intranet.example.test")
        #expect(hop.rules.map(\.description) == ["rules[0] (pass host intranet.example.test)"])
    }

    @Test func headerRulesApplyToTheirHostAndNeverFollowARedirectToAnother() throws {
        var machine = try Self.machine("http://www.example.test/", rules: #"{"action": "header", "host": "www.example.test", "set": {"X-Client": "hostpin"}}"#)
        let first = try Self.resolving(machine.start())
        #expect(first.request.original.value(forHTTPHeaderField: "X-Client") == "hostpin")
        #expect(first.request.unedited.value(forHTTPHeaderField: "X-Client") == nil)
        _ = try Self.sending(machine.resolved(Self.resolution("www.example.test", ["192.0.2.1"])))
        _ = try Self.head(machine.receivedHead(Self.response(URL(string: "http://192.0.2.1/")!, 302, ["Location": "http://other.example.test/"])))
        _ = machine.filedCookies()
        let second = try Self.resolving(machine.transferFinished(nil))
        #expect(second.request.host == "other.example.test")
        #expect(second.request.original.value(forHTTPHeaderField: "X-Client") == nil)
    }

    // MARK: Redirects

    @Test func aFollowedRedirectDropsItsBodyAndCarriesCredentialsToItsOriginOnly() throws {
        var machine = try Self.connected("http://www.example.test/a", machine: Self.machine(
            "http://www.example.test/a", headers: ["Authorization": "Bearer t"]))
        _ = try Self.head(machine.receivedHead(Self.response(URL(string: "http://192.0.2.1/a")!, 302, ["Location": "/b"])))
        #expect(Self.isNone(machine.filedCookies()))
        #expect(Self.isNone(machine.receivedData(Data("moved".utf8))))  // the 302's body is dropped
        let same = try Self.resolving(machine.transferFinished(nil))
        #expect(same.request.url.absoluteString == "http://www.example.test/b")
        #expect(same.request.original.value(forHTTPHeaderField: "Authorization") == "Bearer t")
        _ = try Self.sending(machine.resolved(Self.resolution("www.example.test", ["192.0.2.1"])))
        _ = try Self.head(machine.receivedHead(Self.response(URL(string: "http://192.0.2.1/b")!, 301, ["Location": "http://other.example.test/c"])))
        _ = machine.filedCookies()
        let other = try Self.resolving(machine.transferFinished(nil))
        #expect(other.request.original.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(machine.hops == 2)
    }

    @Test func aRedirectsCookiesFiledByTheDriverGoToTheNextHop() throws {
        let storage = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "hostpin-machine-\(UUID().uuidString)")
        var machine = try Self.connected("http://www.example.test/login", machine: Self.machine(
            "http://www.example.test/login", cookieStorage: storage))
        let setCookie = try Self.response(URL(string: "http://www.example.test/login")!, 302, ["Location": "/home", "Set-Cookie": "session=s1; Path=/"])
        let (response, filing, _) = try Self.head(machine.receivedHead(setCookie))
        // What the driver does with the filing, before filedCookies():
        let url = try #require(filing?.url)
        storage.setCookies(HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": "session=s1; Path=/"], for: url), for: url,
                           mainDocumentURL: nil)
        #expect(response.statusCode == 302)
        _ = machine.filedCookies()
        let next = try Self.resolving(machine.transferFinished(nil))
        #expect(next.request.original.value(forHTTPHeaderField: "Cookie") == "session=s1")
    }

    @Test func aRedirectLoopStopsAtTheHopLimitWithTooManyRedirects() throws {
        var machine = try Self.machine("http://a.example.test/", redirects: .follow(maxHops: 3))
        var host = "a.example.test"
        for hop in 0...3 {
            let next = try Self.resolving(hop == 0 ? machine.start() : machine.transferFinished(nil))
            #expect(next.request.host == host)
            _ = try Self.sending(machine.resolved(Self.resolution(host, ["192.0.2.1"])))
            host = host == "a.example.test" ? "b.example.test" : "a.example.test"
            _ = try Self.head(machine.receivedHead(Self.response(URL(string: "http://192.0.2.1/")!, 302, ["Location": "http://\(host)/"])))
            if hop < 3 { #expect(Self.isNone(machine.filedCookies())) }
        }
        let (error, _, cancel) = try Self.failure(machine.filedCookies())
        #expect(error.code == .httpTooManyRedirects)
        #expect(cancel)  // the 4th redirect's transfer still runs
        #expect(Self.isNone(machine.transferFinished(nil)))
    }

    @Test func aTransparentRuleLoopTheLoadCheckCannotSeeStopsAtTheRuleLimit() throws {
        // Each rule's own example URL leads out of the cycle, so the rules load; /az goes round forever.
        var machine = try Self.machine("http://a.example.test/az", rules: """
            {"action": "redirect", "host": "a.example.test", "path": "/a*", "to": "b.example.test"},
            {"action": "redirect", "host": "b.example.test", "path": "*z", "to": "a.example.test"}
            """)
        let (error, began, _) = try Self.failure(machine.start())
        #expect(error.code == .httpTooManyRedirects)
        #expect(began?.rules.count == Machine.maxRuleRedirects + 1)
    }

    @Test func doNotFollowAndADecliningPolicyHandThe3xxToTheClient() throws {
        var plain = try Self.connected("http://www.example.test/", machine: Self.machine("http://www.example.test/", redirects: .doNotFollow))
        guard case .deliver = try Self.head(plain.receivedHead(Self.response(URL(string: "http://192.0.2.1/")!, 302, ["Location": "/b"]))).then
        else { Issue.record("expected the 302 delivered"); return }
        var decided = try Self.connected("http://www.example.test/", machine: Self.machine(
            "http://www.example.test/", redirects: .decide { _, _ in nil }))
        _ = try Self.head(decided.receivedHead(Self.response(URL(string: "http://192.0.2.1/")!, 302, ["Location": "/b"])))
        guard case .askPolicy(let asked, let proposed, let policy) = decided.filedCookies() else { Issue.record("expected .askPolicy"); return }
        #expect(asked.statusCode == 302)
        #expect(proposed.url?.absoluteString == "http://www.example.test/b")
        let (response, _, step) = try Self.head(decided.policyDecided(policy(asked, proposed)))
        guard case .deliver = step else { Issue.record("expected the 302 delivered"); return }
        #expect(response.value(forHTTPHeaderField: "Location") == "/b")
        guard case .finish = decided.transferFinished(nil) else { Issue.record("expected .finish"); return }
    }

    /// The application's policy runs in the driver (it is the application's code); what it returns is followed.
    @Test func theRequestADecidePolicyReturnsIsTheNextHop() throws {
        var machine = try Self.connected("http://www.example.test/", machine: Self.machine(
            "http://www.example.test/", redirects: .decide { _, proposed in
                var changed = proposed
                changed.url = URL(string: "http://elsewhere.example.test/c")
                return changed
            }))
        _ = try Self.head(machine.receivedHead(Self.response(URL(string: "http://192.0.2.1/")!, 302, ["Location": "/b"])))
        guard case .askPolicy(let response, let proposed, let policy) = machine.filedCookies() else { Issue.record("expected .askPolicy"); return }
        #expect(Self.isNone(machine.policyDecided(policy(response, proposed))))
        #expect(Self.isNone(machine.policyDecided(nil)))  // answered once
        let next = try Self.resolving(machine.transferFinished(nil))
        #expect(next.request.url.absoluteString == "http://elsewhere.example.test/c")
    }

    @Test func aRedirectToANonHTTPSchemeFailsAndStopsTheTransfer() throws {
        var machine = try Self.connected("http://www.example.test/")
        let (_, _, step) = try Self.head(machine.receivedHead(Self.response(URL(string: "http://192.0.2.1/")!, 302, ["Location": "file:///etc/passwd"])))
        guard case .fail(let error) = step else { Issue.record("expected a failure"); return }
        #expect(error.code == .unsupportedURL)
        #expect(Self.isNone(machine.transferFinished(nil)))
    }

    @Test func a307CannotRepeatAStreamBody() throws {
        let stream = RequestBody.stream(OneShotStream(InputStream(data: Data("x".utf8))))
        var machine = try Self.connected("http://www.example.test/", machine: Self.machine("http://www.example.test/", method: "POST", body: stream))
        _ = try Self.head(machine.receivedHead(Self.response(URL(string: "http://192.0.2.1/")!, 307, ["Location": "/again"])))
        let (error, _, cancel) = try Self.failure(machine.filedCookies())
        #expect(error.code == .requestBodyStreamExhausted)
        #expect(cancel)
    }

    // MARK: stopLoading in every state

    @Test func stopInEveryStateCancelsOnceAndSilencesEveryLaterEvent() throws {
        let url = "http://www.example.test/"
        let head = try Self.response(URL(string: "http://192.0.2.1/")!, 302, ["Location": "/b"])
        let states: [(String, (inout Machine) throws -> Void)] = [
            ("idle", { _ in }),
            ("resolving", { _ = $0.start() }),
            ("connecting", { _ = $0.start(); _ = $0.resolved(try Self.resolution("www.example.test", ["192.0.2.1"])) }),
            ("redirecting", { _ = $0.start(); _ = $0.resolved(try Self.resolution("www.example.test", ["192.0.2.1"])); _ = $0.receivedHead(head) }),
            ("askingPolicy", { machine in
                machine = try Self.machine(url, redirects: .decide { _, proposed in proposed })
                _ = machine.start(); _ = machine.resolved(try Self.resolution("www.example.test", ["192.0.2.1"]))
                _ = machine.receivedHead(head); _ = machine.filedCookies() }),
            ("following", { _ = $0.start(); _ = $0.resolved(try Self.resolution("www.example.test", ["192.0.2.1"]))
                            _ = $0.receivedHead(head); _ = $0.filedCookies() }),
            ("receiving", { machine in
                _ = machine.start(); _ = machine.resolved(try Self.resolution("www.example.test", ["192.0.2.1"]))
                _ = machine.receivedHead(try Self.response(URL(string: "http://192.0.2.1/")!, 200)) }),
        ]
        for (name, reach) in states {
            var machine = try Self.machine(url)
            try reach(&machine)
            guard case .cancel(let error) = machine.stop() else { Issue.record("\(name): expected .cancel"); continue }
            #expect(error.code == .cancelled, "\(name)")
            #expect(machine.isStopped, "\(name)")
            #expect(Self.isNone(machine.stop()), "\(name)")
            #expect(Self.isNone(machine.start()), "\(name)")
            #expect(Self.isNone(machine.resolved(try Self.resolution("www.example.test", ["192.0.2.1"]))), "\(name)")
            #expect(Self.isNone(machine.receivedHead(head)), "\(name)")
            #expect(Self.isNone(machine.filedCookies()), "\(name)")
            #expect(Self.isNone(machine.policyDecided(nil)), "\(name)")
            #expect(Self.isNone(machine.receivedData(Data("x".utf8))), "\(name)")
            #expect(Self.isNone(machine.transferFinished(nil)), "\(name)")
            #expect(Self.isNone(machine.transferFinished(Self.refused)), "\(name)")
        }
        // After the ending action, stop has nothing to cancel.
        var failed = try Self.machine(url)
        _ = failed.start()
        _ = failed.resolved(.failure(.nxdomain(try HostName.parse("www.example.test"))))
        #expect(Self.isNone(failed.stop()))
    }
}
