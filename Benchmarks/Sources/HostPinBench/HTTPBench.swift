import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import HostPinURL
import Synchronization

/// Responses the observer heard of (`--observer 1`).
private let observed = Atomic<Int>(0)

/// Item 3: `--inflight` tasks (8) each sending GET `--url` back to back through one URLSession for
/// `--seconds`, after `--warmup` seconds (which also warms HostPin's cache and the connection pool).
/// `--mode pinned`: `URLSessionConfiguration.pinned(resolver:family: .v4, extraCAFile:)` over a
/// `CachingResolver(TrustedResolver([--server]))`; `--mode pinned-curl`: the same with plain HTTP through
/// libcurl (`plainHTTP: .libcurl`); `--mode plain`: `URLSessionConfiguration.default`. `--observer 1`
/// (pinned modes) sets an observer that counts the events, to measure what observing costs against the
/// same mode without one (issue 14: no cost when no observer is set). `--mode null-protocol`: a URLProtocol
/// that answers at once without any network (``NullProtocol``): what FoundationNetworking's dispatch of
/// one protocol-handled task costs, the part of the pinned default path that an inner URLSession adds to a
/// plain one (issue 18).
/// Reports requests/s, p50/p99 latency (µs) and this process's CPU time (getrusage) per request (µs).
enum HTTPBench {
    static func run(_ options: Options) async {
        let mode = options.string("mode")
        let url = URL(string: options.string("url"))!
        let seconds = options.double("seconds", 3)
        let warmup = options.double("warmup", 1)
        let inflight = options.int("inflight", 8)
        let expect = options.string("expect", "origin=")
        let id = options.string("id", "http.\(mode)")

        let configuration: URLSessionConfiguration
        switch mode {
        case "pinned", "pinned-curl":
            guard let upstream = Upstream(options.string("server")) else { fail("bad --server") }
            let resolver: CachingResolver
            do throws(ResolutionError) {
                // Unvalidated, as these rows have always measured (the DNSSEC rows are to come apart).
                var configuration = TrustedResolver.Configuration(upstreams: [upstream])
                configuration.dnssec = .off
                resolver = CachingResolver(upstream: try TrustedResolver(configuration: configuration))
            } catch {
                fail("resolver: \(error)")
            }
            let ca = options.string("ca", "")
            var observer: PinnedURLProtocol.Observer?
            if options.int("observer", 0) != 0 {
                observer = { (event: PinnedURLProtocol.Event) in
                    if case .response = event.outcome { observed.add(1, ordering: .relaxed) }
                }
            }
            configuration = .pinned(resolver: resolver, family: .v4, extraCAFile: ca.isEmpty ? nil : ca,
                                    plainHTTP: mode == "pinned-curl" ? .libcurl : .urlSession, observer: observer)
        case "plain":
            configuration = .default
        case "null-protocol":
            configuration = .default
            configuration.protocolClasses = [NullProtocol.self]
        default:
            fail("--mode pinned|pinned-curl|plain|null-protocol")
        }
        let session = URLSession(configuration: configuration)
        let request = URLRequest(url: url)

        // Check one answer first: a benchmark of errors measures nothing.
        do {
            let (body, response) = try await session.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            let text = String(decoding: body, as: UTF8.self)
            guard status == 200, text.contains(expect) else { fail("\(url): status \(status), body '\(text)'") }
        } catch {
            fail("\(url): \(error)")
        }

        _ = await load(session, request, inflight: inflight, seconds: warmup)
        let cpu0 = cpuMicroseconds()
        let t0 = nowNanoseconds()
        let latencies = await load(session, request, inflight: inflight, seconds: seconds)
        let elapsed = Double(nowNanoseconds() - t0) / 1e9
        let cpu = cpuMicroseconds() - cpu0
        let sorted = latencies.sorted()
        report("\(id).rps", Double(sorted.count) / elapsed)
        report("\(id).p50us", percentile(sorted, 50) / 1000)
        report("\(id).p99us", percentile(sorted, 99) / 1000)
        report("\(id).cpuus", cpu / Double(max(sorted.count, 1)))
        if options.int("observer", 0) != 0, observed.load(ordering: .relaxed) < sorted.count {
            fail("the observer heard of \(observed.load(ordering: .relaxed)) responses, fewer than the \(sorted.count) measured")
        }
        session.invalidateAndCancel()
    }

    /// Latencies (ns) of every request completed by `inflight` looping tasks within `seconds`.
    static func load(_ session: URLSession, _ request: URLRequest, inflight: Int, seconds: Double) async -> [Double] {
        let deadline = nowNanoseconds() + UInt64(seconds * 1e9)
        return await withTaskGroup(of: [Double].self) { group in
            for _ in 0..<inflight {
                group.addTask {
                    var samples: [Double] = []
                    while nowNanoseconds() < deadline {
                        let t0 = nowNanoseconds()
                        do {
                            let (_, response) = try await session.data(for: request)
                            guard (response as? HTTPURLResponse)?.statusCode == 200 else { fail("status not 200") }
                        } catch {
                            fail("\(request.url!): \(error)")
                        }
                        samples.append(Double(nowNanoseconds() - t0))
                    }
                    return samples
                }
            }
            var all: [Double] = []
            for await samples in group { all += samples }
            return all
        }
    }
}

/// Answers every http(s) request at once with 200 and a small body, on FoundationNetworking's work queue
/// (where `startLoading` runs): the cost of a protocol-handled task without any transport.
private final class NullProtocol: URLProtocol {
    private static let body = Data("origin=null\n".utf8)

    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.scheme == "http" || request.url?.scheme == "https"
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url,
              let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                             headerFields: ["Content-Length": "\(Self.body.count)"])
        else { return }
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Self.body)
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}
}
