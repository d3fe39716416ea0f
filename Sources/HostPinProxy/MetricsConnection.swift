import HostPin
import HostPinNet

/// One client connection of the ``MetricsEndpoint``: reads request heads one after another (keep-alive)
/// with the proxy's strict parser (``RequestHeadParser``) and answers each (``MetricsRequest``,
/// ``MetricsResponse``). A head that breaks RFC 9112 or the limits, or is not complete in time, is
/// answered with its status and the connection closes (``LingeringClose``); so does a request with a body,
/// which the endpoint never reads.
struct MetricsConnection: Sendable {
    let client: SocketChannel
    let configuration: MetricsEndpoint.Configuration
    let metrics: ServiceMetrics
    let slot: ConnectionSlot

    /// Serves the connection until the client closes it, an error ends it, or the endpoint stops.
    func run() async {
        let input = BufferedInput(channel: client)
        defer { client.close() }
        let parser = RequestHeadParser(limits: configuration.headLimits)
        var headDeadline = ContinuousClock.Instant.after(configuration.requestHeadTimeout)
        var first = true
        while true {
            guard await input.awaitBytes(deadline: first ? headDeadline : .after(configuration.idleTimeout)) else { return }
            if !first { headDeadline = .after(configuration.requestHeadTimeout) }
            first = false
            guard slot.beginRequest() else { return }
            let response: MetricsResponse
            do throws(BufferedInput.HeadFailure) {
                guard let bytes = try await input.readHead(limits: configuration.headLimits, deadline: headDeadline,
                                                           skippingEmptyLines: true)
                else { return }
                response = Self.response(to: bytes, parser: parser, metrics: metrics, stopping: slot.isStopping)
            } catch {
                switch error {
                case .head(let problem):
                    response = .error(problem.status, "Bad request: \(problem).")
                case .socket(.timedOut):
                    response = .error(408, "The request head was not complete within \(configuration.requestHeadTimeout.proxySeconds).")
                case .socket, .truncated:
                    return
                }
            }
            guard await send(response), slot.endRequest() else { return }
        }
    }

    /// The response to a complete head: parsed, routed, answered; closing when the client asks, the
    /// request has a body, or the endpoint stops.
    static func response(to head: [UInt8], parser: RequestHeadParser, metrics: ServiceMetrics, stopping: Bool) -> MetricsResponse {
        let request: RequestHead
        do throws(HeadError) {
            request = try parser.parse(head)
        } catch {
            return .error(error.status, "Bad request: \(error).")
        }
        var response = MetricsResponse(MetricsRequest(request), metrics: metrics)
        if !request.wantsKeepAlive || request.framing != .none || stopping { response.closing = true }
        return response
    }

    /// Writes `response`; returns whether the connection stays open for another request.
    private func send(_ response: MetricsResponse) async -> Bool {
        do throws(SocketError) {
            try await client.write(response.wireBytes, deadline: .after(configuration.idleTimeout))
        } catch {
            return false
        }
        guard response.closing else { return true }
        await LingeringClose.drain(client)
        return false
    }
}
