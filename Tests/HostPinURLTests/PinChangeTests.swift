import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import HostPinTestSupport
import HostPinURL
import Testing

extension InterceptorTests {
    /// When the trusted answer for a name changes (its TTL ran out and the upstream now gives another
    /// address), the next request in the same process goes to the new address on every transport —
    /// whatever connection an earlier request left open to the old one.
    @Suite struct PinChangeTests {
        /// One transport, and the record of the name before and after the change.
        struct Change: Sendable, CustomTestStringConvertible {
            let scheme: String
            let plainHTTP: PinnedURLProtocol.PlainHTTPTransport
            let name: String
            /// `TYPE ADDRESS` records, e.g. `A 127.0.0.10`.
            let before: [String]
            let after: [String]
            /// The `origin=` the lab's nginx answers on the address (www 127.0.0.10, cdn .11, v6 ::1).
            let originBefore: String
            let originAfter: String
            var testDescription: String { "\(scheme) \(plainHTTP) \(name): \(before) → \(after)" }
        }

        static let changes = [
            Change(scheme: "http", plainHTTP: .urlSession, name: "www", before: ["A 127.0.0.10"], after: ["A 127.0.0.11"],
                   originBefore: "www", originAfter: "cdn"),
            Change(scheme: "http", plainHTTP: .libcurl, name: "www", before: ["A 127.0.0.10"], after: ["A 127.0.0.11"],
                   originBefore: "www", originAfter: "cdn"),
            Change(scheme: "https", plainHTTP: .urlSession, name: "www", before: ["A 127.0.0.10"], after: ["A 127.0.0.11"],
                   originBefore: "www", originAfter: "cdn"),
            Change(scheme: "https", plainHTTP: .urlSession, name: "dual", before: ["AAAA ::1"], after: ["A 127.0.0.11"],
                   originBefore: "v6", originAfter: "cdn"),
            Change(scheme: "http", plainHTTP: .libcurl, name: "dual", before: ["A 127.0.0.10"], after: ["AAAA ::1"],
                   originBefore: "www", originAfter: "v6"),
            // Address sets, which curl gets under a stand-in name each (CurlPinning): a kept-alive
            // connection to the first set's ::1 must not carry the request for the second set.
            Change(scheme: "https", plainHTTP: .urlSession, name: "dual", before: ["A 127.0.0.10", "AAAA ::1"],
                   after: ["A 127.0.0.11", "A 127.0.0.12"], originBefore: "v6", originAfter: "cdn"),
            Change(scheme: "http", plainHTTP: .libcurl, name: "dual", before: ["A 127.0.0.10", "AAAA ::1"],
                   after: ["A 127.0.0.11", "AAAA ::ffff:127.0.0.11"], originBefore: "v6", originAfter: "cdn"),
        ]

        /// `example.test` with `name` at `records` and a TTL of 1 s (`www` keeps an A record: the server's
        /// start-up probe asks for it).
        static func zone(_ name: String, _ records: [String]) -> String {
            """
            $ORIGIN example.test.
            $TTL 1
            @ 1 IN SOA ns.example.test. hostmaster.example.test. ( 1 3600 600 86400 1 )
            @ 1 IN NS ns.example.test.
            ns 1 IN A 127.0.0.1
            \(name == "www" ? "" : "www 1 IN A 127.0.0.10")
            \(records.map { "\(name) 1 IN \($0)" }.joined(separator: "\n"))

            """
        }

        @Test(arguments: changes)
        func nextRequestGoesToTheNewAddress(_ change: Change) async throws {
            let lab = try Lab.current()
            let server = try await AuthoritativeServer(zone: Self.zone(change.name, change.before))
            defer { PinnedLab.reinstall() }
            // An unsigned zone of its own: DNSSEC off.
            let resolver = CachingResolver(upstream: try TrustedResolver(configuration: .ownServer([server.address])))
            let session = URLSession(configuration: .pinned(resolver: resolver, extraCAFile: lab.caFile,
                                                            plainHTTP: change.plainHTTP, base: .ephemeral))
            defer { session.finishTasksAndInvalidate() }
            let host = "\(change.name).example.test"
            let url = try PinnedLab.url(host, "/whoami", scheme: change.scheme)
            let authority = "\(host):\(change.scheme == "https" ? lab.httpsPort : lab.httpPort)"

            let (first, _) = try await session.data(from: url)
            #expect(String(decoding: first, as: UTF8.self) == "origin=\(change.originBefore) host=\(authority)\n")

            try await server.serve(zone: Self.zone(change.name, change.after))
            let moved = try change.after.map { try #require(IPAddress(String($0.split(separator: " ")[1]))) }
            try await Self.waitUntil(resolver, answers: moved, for: host)
            let (second, _) = try await session.data(from: url)
            #expect(String(decoding: second, as: UTF8.self) == "origin=\(change.originAfter) host=\(authority)\n")
        }

        /// Asks `resolver` until its answer for `host` is `addresses` (in any order: the old one's TTL has
        /// run out).
        static func waitUntil(_ resolver: CachingResolver, answers addresses: [IPAddress], for host: String) async throws {
            let name = try HostName.parse(host)
            let deadline = ContinuousClock.now + .seconds(10)
            while try await Set(resolver.resolve(name, family: .any).ipAddresses) != Set(addresses) {
                guard ContinuousClock.now < deadline else {
                    Issue.record("\(host) still does not resolve to \(addresses) alone after 10 s")
                    return
                }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }
}
