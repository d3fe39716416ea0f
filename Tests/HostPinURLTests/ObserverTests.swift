import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import HostPinTestSupport
import HostPinURL
import Synchronization
import Testing

/// Collects the events an observer receives.
final class EventLog: Sendable {
    private let events = Mutex<[PinnedURLProtocol.Event]>([])

    var observer: PinnedURLProtocol.Observer { { [self] event in events.withLock { $0.append(event) } } }
    var all: [PinnedURLProtocol.Event] { events.withLock { $0 } }
}

extension InterceptorTests {
    /// The observer's one event per request, against the lab: a plain request, a redirected one, one a
    /// rule answered, failed ones. Each event has arrived by the time the task completes.
    @Suite struct ObserverTests {
        let port: UInt16

        init() throws {
            port = try Lab.current().httpPort
        }

        private func address(_ text: String) throws -> IPAddress { try #require(IPAddress(text)) }

        private func rules(_ json: String) throws -> Rules {
            try Rules(json: Data("{\"rules\": [\(json)]}".utf8), relativeTo: FileManager.default.temporaryDirectory)
        }

        /// A name whose answer is DNSSEC-bogus is a resolution failure: `.dnsLookupFailed`, and the event
        /// (and the error) say why: which RRset, which key, what was wrong. Nothing is sent.
        @Test func bogusNameFailsAsDNSLookupFailedWithTheReasonInTheEvent() async throws {
            let log = EventLog()
            let session = URLSession(configuration: .pinned(resolver: BogusResolver(), observer: log.observer, base: .ephemeral))
            defer { PinnedLab.reinstall() }
            let url = try PinnedLab.url("modified.example.test", "/whoami")
            let error = await #expect(throws: URLError.self) { try await session.data(from: url) }
            #expect(error?.code == .dnsLookupFailed)
            let sentence = "DNSSEC validation failed (bogus): modified.example.test. A (key 4242): signature does not verify "
                + "(the RRSIG does not match the RRset)"
            #expect(error?.localizedDescription == sentence)
            let event = try #require(log.all.first)
            #expect(log.all.count == 1)
            guard case .failed(let failure) = event.outcome else { Issue.record("\(event.outcome)"); return }
            #expect(failure.code == .dnsLookupFailed)
            #expect(failure.localizedDescription == sentence)
            let hop = try #require(event.finalHop)
            #expect(hop.transport == nil && hop.addresses.isEmpty && hop.attempts.isEmpty && hop.status == nil)
        }

        @Test func plainRequestReportsItsHopAddressAndBytes() async throws {
            let log = EventLog()
            let session = try PinnedLab.session(observer: log.observer)
            defer { PinnedLab.reinstall() }
            let url = try PinnedLab.url("www.example.test", "/whoami")
            let (data, _) = try await session.data(from: url)
            let event = try #require(log.all.first)
            #expect(log.all.count == 1)
            #expect(event.url == url)
            #expect(event.bytes == data.count && event.bytes > 0)
            #expect(event.duration > .zero)
            guard case .response(200) = event.outcome else { Issue.record("\(event.outcome)"); return }
            #expect(event.redirects.isEmpty)
            let hop = try #require(event.finalHop)
            #expect(hop.url == url && hop.fetchedURL == url && hop.host == "www.example.test")
            #expect(hop.rules.isEmpty)
            #expect(hop.transport == .urlSession)
            #expect(hop.source == .upstream || hop.source == .cache)
            #expect(hop.addresses == [try address("127.0.0.10")])
            #expect(hop.attempts.map(\.address) == [try address("127.0.0.10")])
            #expect(hop.address == (try address("127.0.0.10")))
            #expect(hop.status == 200)
        }

        @Test func bothFamiliesOverLibcurlReportTheRaceOrderAndTheWinner() async throws {
            let log = EventLog()
            let session = try PinnedLab.session(observer: log.observer)
            defer { PinnedLab.reinstall() }
            _ = try await session.data(from: try PinnedLab.url("dual.example.test", "/whoami", scheme: "https"))
            let hop = try #require(log.all.first?.finalHop)
            #expect(hop.transport == .libcurl)
            #expect(hop.addresses == [try address("::1"), try address("127.0.0.10")])
            // A kept-alive connection from an earlier test would have no attempt; the answer is IPv6 either way.
            #expect(hop.attempts.map(\.address).allSatisfy { $0 == (try? address("::1")) })
            #expect(hop.address == (try address("::1")))
        }

        /// The address set is this test's own: a kept-alive connection to it (which no attempt would
        /// show) cannot be left over from another test.
        @Test func refusedAttemptIsListedBeforeTheOneThatAnswered() async throws {
            let log = EventLog()
            let session = try PinnedLab.session(
                plainHTTP: .libcurl,
                rules: try rules(#"{"action": "pin", "host": "dual.example.test", "addresses": ["127.0.0.10", "::ffff:127.0.0.13"]}"#),
                observer: log.observer)
            defer { PinnedLab.reinstall() }
            _ = try await session.data(from: try PinnedLab.url("dual.example.test", "/whoami"))
            let hop = try #require(log.all.first?.finalHop)
            #expect(hop.rules.map(\.keyPath) == ["rules[0]"])
            #expect(hop.source == .pinned)
            #expect(hop.attempts.map(\.address) == [try address("::ffff:127.0.0.13"), try address("127.0.0.10")])
            #expect(hop.address == (try address("127.0.0.10")))
        }

        @Test func redirectedRequestReportsEveryHop() async throws {
            let log = EventLog()
            let session = try PinnedLab.session(observer: log.observer)
            defer { PinnedLab.reinstall() }
            let target = try PinnedLab.url("cdn.example.test", "/whoami")
            let url = try #require(URL(string: "http://www.example.test:\(port)/redirect/302?to=\(target.absoluteString)"))
            let (data, _) = try await session.data(from: url)
            #expect(String(decoding: data, as: UTF8.self) == "origin=cdn host=cdn.example.test:\(port)\n")
            let event = try #require(log.all.first)
            #expect(log.all.count == 1)
            #expect(event.redirects == [target])
            #expect(event.hops.map(\.host) == ["www.example.test", "cdn.example.test"])
            #expect(event.hops.map(\.status) == [302, 200])
            #expect(event.hops.map(\.address) == [try address("127.0.0.10"), try address("127.0.0.11")])
            #expect(event.bytes == data.count)  // the 302's own body is not delivered
            guard case .response(200) = event.outcome else { Issue.record("\(event.outcome)"); return }
        }

        @Test func ruleAnsweredRequestIsALocalResponseWithoutAddresses() async throws {
            let log = EventLog()
            let session = try PinnedLab.session(
                rules: try rules(#"{"action": "respond", "url": "http://www.example.test:\#(port)/logo.png", "body": "local\n"}"#),
                observer: log.observer)
            defer { PinnedLab.reinstall() }
            let url = try PinnedLab.url("www.example.test", "/logo.png")
            _ = try await session.data(from: url)
            let event = try #require(log.all.first)
            let hop = try #require(event.finalHop)
            #expect(hop.transport == .localResponse)
            #expect(hop.rules.map(\.description) == ["rules[0] (respond url http://www.example.test:\(port)/logo.png)"])
            #expect(hop.source == nil && hop.addresses.isEmpty && hop.attempts.isEmpty && hop.address == nil)
            #expect(hop.status == 200)
            #expect(event.bytes == 6)
        }

        @Test func transparentRedirectReportsBothRulesAndTheFetchedURL() async throws {
            let log = EventLog()
            let session = try PinnedLab.session(rules: try rules("""
                {"action": "redirect", "url": "http://www.example.test:\(port)/style.css", "to": "http://cdn.example.test:\(port)/whoami"},
                {"action": "pin", "host": "cdn.example.test", "addresses": ["127.0.0.11"]}
                """), observer: log.observer)
            defer { PinnedLab.reinstall() }
            let url = try PinnedLab.url("www.example.test", "/style.css")
            _ = try await session.data(from: url)
            let hop = try #require(log.all.first?.finalHop)
            #expect(hop.url == url)
            #expect(hop.fetchedURL == (try PinnedLab.url("cdn.example.test", "/whoami")))
            #expect(hop.host == "cdn.example.test")
            #expect(hop.rules.map(\.keyPath) == ["rules[0]", "rules[1]"])
            #expect(hop.source == .pinned)
        }

        @Test func failedRequestReportsTheErrorAndNoTransport() async throws {
            let log = EventLog()
            let session = try PinnedLab.session(observer: log.observer)
            defer { PinnedLab.reinstall() }
            let url = try PinnedLab.url("nx.example.test", "/")
            await #expect(throws: URLError.self) { try await session.data(from: url) }
            let event = try #require(log.all.first)
            #expect(log.all.count == 1)
            guard case .failed(let error) = event.outcome else { Issue.record("\(event.outcome)"); return }
            #expect(error.code == .cannotFindHost)
            let hop = try #require(event.finalHop)
            #expect(hop.host == "nx.example.test" && hop.transport == nil && hop.source == nil && hop.status == nil)
            #expect(event.bytes == 0)
        }

        @Test func blockedRequestNamesTheRule() async throws {
            let log = EventLog()
            let session = try PinnedLab.session(rules: try rules(#"{"action": "block", "host": "www.example.test"}"#),
                                                observer: log.observer)
            defer { PinnedLab.reinstall() }
            let url = try PinnedLab.url("www.example.test", "/")
            await #expect(throws: URLError.self) { try await session.data(from: url) }
            let event = try #require(log.all.first)
            guard case .failed(let error) = event.outcome else { Issue.record("\(event.outcome)"); return }
            #expect(error.code == .resourceUnavailable)
            #expect(event.finalHop?.rules.map(\.keyPath) == ["rules[0]"])
            #expect(event.finalHop?.transport == nil)
        }

        @Test func cancelledRequestEndsCancelled() async throws {
            let log = EventLog()
            let session = try PinnedLab.session(observer: log.observer)
            defer { PinnedLab.reinstall() }
            let task = session.dataTask(with: try PinnedLab.url("www.example.test", "/slow/10000"))
            task.resume()
            try await Task.sleep(for: .milliseconds(300))
            task.cancel()
            let deadline = ContinuousClock.now + .seconds(10)
            while log.all.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            let event = try #require(log.all.first)
            guard case .failed(let error) = event.outcome else { Issue.record("\(event.outcome)"); return }
            #expect(error.code == .cancelled)
        }

        @Test func withoutAnObserverNothingIsReported() async throws {
            let log = EventLog()
            _ = try PinnedLab.session(observer: log.observer)
            let session = try PinnedLab.session()  // installs again, without an observer
            _ = try await session.data(from: try PinnedLab.url("www.example.test", "/whoami"))
            #expect(log.all.isEmpty)
        }
    }
}
