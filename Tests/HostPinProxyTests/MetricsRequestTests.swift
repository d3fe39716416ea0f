import HostPin
@testable import HostPinProxy
import Testing

/// How the metrics endpoint routes a parsed head: by path first, then by method, without sockets.
@Suite struct MetricsRequestTests {
    private static func route(_ head: String) throws -> MetricsRequest {
        MetricsRequest(try RequestHeadParser().parse(Array(head.utf8)))
    }

    @Test(arguments: [
        ("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", MetricsRequest.metrics(headOnly: false)),
        ("HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n", .metrics(headOnly: true)),
        ("GET /metrics?name[]=x HTTP/1.1\r\nHost: x\r\n\r\n", .metrics(headOnly: false)),
        ("GET http://127.0.0.1:9100/metrics HTTP/1.1\r\nHost: x\r\n\r\n", .metrics(headOnly: false)),
        ("GET /healthz HTTP/1.0\r\n\r\n", .health(headOnly: false)),
        ("HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n", .health(headOnly: true)),
        ("GET / HTTP/1.1\r\nHost: x\r\n\r\n", .page(headOnly: false)),
        ("HEAD /?refresh=1 HTTP/1.1\r\nHost: x\r\n\r\n", .page(headOnly: true)),
        ("GET /status.json HTTP/1.1\r\nHost: x\r\n\r\n", .status(headOnly: false)),
        ("HEAD /status.json HTTP/1.1\r\nHost: x\r\n\r\n", .status(headOnly: true)),
        ("GET /status.json/ HTTP/1.1\r\nHost: x\r\n\r\n", .notFound(path: "/status.json/")),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n", .methodNotAllowed(method: "POST")),
        ("PUT /status.json HTTP/1.1\r\nHost: x\r\n\r\n", .methodNotAllowed(method: "PUT")),
        ("GET /metrics/ HTTP/1.1\r\nHost: x\r\n\r\n", .notFound(path: "/metrics/")),
        ("POST /nowhere HTTP/1.1\r\nHost: x\r\n\r\n", .notFound(path: "/nowhere")),
        ("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n", .methodNotAllowed(method: "POST")),
        ("DELETE /healthz HTTP/1.1\r\nHost: x\r\n\r\n", .methodNotAllowed(method: "DELETE")),
        ("get /metrics HTTP/1.1\r\nHost: x\r\n\r\n", .methodNotAllowed(method: "get")),  // methods are case-sensitive
        ("CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n", .methodNotAllowed(method: "CONNECT")),
        ("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", .methodNotAllowed(method: "OPTIONS")),
    ])
    func routes(_ head: String, _ expected: MetricsRequest) throws {
        #expect(try Self.route(head) == expected)
    }

    @Test func errorsAreOneLineAndClose() {
        let response = MetricsResponse.error(404, "Not found: /x.")
        #expect(String(decoding: response.wireBytes, as: UTF8.self) == "HTTP/1.1 404 Not Found\r\n"
                    + "Content-Type: text/plain; charset=utf-8\r\nContent-Length: 15\r\nCache-Control: no-store\r\n"
                    + "X-Content-Type-Options: nosniff\r\n"
                    + "Connection: close\r\n\r\nNot found: /x.\n")
    }
}
