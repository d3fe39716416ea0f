import Dispatch
import HostPin
import Synchronization

/// One client connection: reads request heads one after another (keep-alive), and for each one
/// forwards an absolute-form request to its pinned origin, opens a CONNECT tunnel, or answers with a
/// ``ProxyError``.
///
/// The states are the steps of ``run()``: wait for a head (idle timeout) → parse → resolve and connect →
/// send the head and, concurrently, the body while waiting for the response head (origin timeout; 1xx
/// responses are passed on) → relay the response body → back to waiting, or close. A tunnel or any
/// error ends the connection.
struct ProxyConnection: Sendable {
    let client: SocketChannel
    let configuration: ForwardProxy.Configuration
    let connector: OriginConnector
    let parser: RequestHeadParser

    /// What one request left behind.
    private struct Outcome {
        var status: Int
        var bytes: UInt64 = 0
        var pinned: SocketAddress?
        var keepAlive = false
    }

    /// Serves the connection until the client closes it, an error ends it, or the proxy stops.
    func run() async {
        let input = BufferedInput(channel: client)
        defer { client.close() }
        var first = true
        while true {
            let deadline = DispatchTime.after(first ? configuration.originTimeout : configuration.idleTimeout)
            first = false
            let bytes: [UInt8]?
            do throws(BufferedInput.HeadFailure) {
                bytes = try await input.readHead(limits: configuration.headLimits, deadline: deadline, skippingEmptyLines: true)
            } catch {
                if case .head(let problem) = error {
                    await refuse(.malformedRequest(problem), method: "-", target: "-", started: ContinuousClock.now)
                }
                return
            }
            guard let bytes else { return }
            let started = ContinuousClock.now
            let head: RequestHead
            do throws(HeadError) {
                head = try parser.parse(bytes)
            } catch {
                await refuse(.malformedRequest(error), method: "-", target: "-", started: started)
                return
            }
            guard await serve(head, input: input, started: started) else { return }
        }
    }

    /// Serves one request; returns whether the connection stays open for another.
    private func serve(_ head: RequestHead, input: BufferedInput, started: ContinuousClock.Instant) async -> Bool {
        switch head.target {
        case .originForm, .asteriskForm:
            await refuse(.notAProxyRequest(target: head.targetText), method: head.method, target: head.targetText, started: started)
            return false
        case .authorityForm(let authority):
            await Tunnel(client: client, input: input, configuration: configuration, connector: connector)
                .open(head, authority: authority, started: started)
            return false
        case .absoluteForm(let authority, let path):
            let when = AccessLogEntry.now()
            var outcome: Outcome
            do throws(ProxyError) {
                outcome = try await forward(head, authority: authority, path: path, input: input)
            } catch {
                await refuse(error, method: head.method, target: head.targetText, started: started)
                return false
            }
            log(head.method, head.targetText, outcome.pinned, outcome.status, outcome.bytes, started, when)
            return outcome.keepAlive
        }
    }

    /// Forwards one absolute-form request. Throws only before any response byte reached the client;
    /// later failures end the connection (reported through the outcome's `keepAlive == false`).
    private func forward(_ head: RequestHead, authority: RequestTarget.Authority, path: String,
                         input: BufferedInput) async throws(ProxyError) -> Outcome {
        let addresses = try await connector.pinnedAddresses(for: authority)
        let origin = try await connector.connect(host: authority.host, addresses: addresses)
        defer { origin.channel.close() }
        let via = configuration.viaPseudonym
        do throws(SocketError) {
            try await origin.channel.write(ForwardedHead.request(head, authority: authority, path: path, via: via),
                                           deadline: .after(configuration.idleTimeout))
        } catch {
            throw .originClosed(origin.address)
        }
        let upload = Upload(hasBody: head.framing != .none)
        let configuration = configuration
        async let uploaded: Void = upload.run {
            () async throws(BodyRelay.Failure) -> Void in
            _ = try await BodyRelay.relay(head.framing, from: input, to: origin.channel,
                                          coding: head.framing == .chunked ? .chunked : .identity,
                                          idle: configuration.idleTimeout)
        } onFailure: {
            origin.channel.shutdown()
        }
        let originInput = BufferedInput(channel: origin.channel)
        var outcome = Outcome(status: 502, pinned: origin.address)
        do throws(ProxyError) {
            outcome = try await relayResponse(head, from: originInput, origin: origin.address)
        } catch {
            // Leaving the scope cancels the upload (its waits end with `.cancelled`) and awaits it.
            if case .failed(.malformedChunk(let problem)) = upload.state { throw .malformedBody(problem) }
            throw error
        }
        if !upload.isFinished {
            // The origin answered before the whole body arrived: the rest of it cannot be told apart
            // from a next request, so the connection ends.
            client.shutdown()
            outcome.keepAlive = false
        }
        await uploaded
        if case .failed = upload.state { outcome.keepAlive = false }
        return outcome
    }

    /// Reads the origin's response (passing 1xx responses on) and relays it to the client.
    private func relayResponse(_ head: RequestHead, from originInput: BufferedInput, origin: SocketAddress)
        async throws(ProxyError) -> Outcome
    {
        let deadline = DispatchTime.after(configuration.originTimeout)
        var response: ResponseHead
        while true {
            let bytes: [UInt8]?
            do throws(BufferedInput.HeadFailure) {
                bytes = try await originInput.readHead(limits: configuration.headLimits, deadline: deadline,
                                                       skippingEmptyLines: false)
            } catch {
                switch error {
                case .head(let problem): throw .badOriginResponse(origin, problem)
                case .socket(.timedOut): throw .originTimedOut(origin, timeout: configuration.originTimeout)
                case .socket, .truncated: throw .originClosed(origin)
                }
            }
            guard let bytes else { throw .originClosed(origin) }
            do throws(HeadError) {
                response = try ResponseHead.parse(bytes, limits: configuration.headLimits)
            } catch {
                throw .badOriginResponse(origin, error)
            }
            guard response.status < 200 else { break }
            if response.status == 101 { throw .badOriginResponse(origin, .malformedStatusLine) }
            if head.version == .http11 {
                let interim = ForwardedHead.response(response, coding: .identity, closing: false, via: configuration.viaPseudonym)
                do throws(SocketError) {
                    try await client.write(interim, deadline: .after(configuration.idleTimeout))
                } catch {
                    return Outcome(status: response.status, pinned: origin)
                }
            }
        }
        let framing: BodyFraming
        do throws(HeadError) {
            framing = try response.framing(requestMethod: head.method)
        } catch {
            throw .badOriginResponse(origin, error)
        }
        let coding: BodyRelay.OutputCoding = framing == .chunked && head.version == .http11 ? .chunked : .identity
        let keepAlive = head.wantsKeepAlive && framing != .untilClose && !(framing == .chunked && coding == .identity)
        var outcome = Outcome(status: response.status, pinned: origin)
        do throws(SocketError) {
            try await client.write(ForwardedHead.response(response, coding: coding, closing: !keepAlive,
                                                          via: configuration.viaPseudonym),
                                   deadline: .after(configuration.idleTimeout))
        } catch {
            return outcome
        }
        do throws(BodyRelay.Failure) {
            outcome.bytes = try await BodyRelay.relay(framing, from: originInput, to: client, coding: coding,
                                                      idle: configuration.idleTimeout)
            outcome.keepAlive = keepAlive
        } catch {
            outcome.keepAlive = false
        }
        return outcome
    }

    /// Sends `error` as the response, logs it, and leaves the connection to be closed.
    func refuse(_ error: ProxyError, method: String, target: String, started: ContinuousClock.Instant) async {
        let when = AccessLogEntry.now()
        try? await client.write(error.response(via: configuration.viaPseudonym), deadline: .after(configuration.idleTimeout))
        client.shutdownWrite()
        log(method, target, nil, error.status, 0, started, when)
    }

    /// Writes one access-log entry.
    func log(_ method: String, _ target: String, _ pinned: SocketAddress?, _ status: Int, _ bytes: UInt64,
             _ started: ContinuousClock.Instant, _ when: (unixSeconds: Int, nanoseconds: Int)) {
        guard let accessLog = configuration.accessLog else { return }
        accessLog(AccessLogEntry(unixSeconds: when.unixSeconds, nanoseconds: when.nanoseconds, client: client.peer,
                                 method: method, target: target, pinned: pinned, status: status, bytes: bytes,
                                 duration: ContinuousClock.now - started))
    }
}

/// The request body's upload, run beside the response: its state is read by the response side.
private final class Upload: Sendable {
    enum State: Sendable {
        case running
        case finished
        case failed(BodyRelay.Failure)
    }

    /// Guards the upload's state, written by the upload task and read by the response side.
    private let current: Mutex<State>

    /// A request without a body is finished from the start, so the response side never waits for (or
    /// races with) an upload task that has nothing to do.
    init(hasBody: Bool) {
        current = Mutex(hasBody ? .running : .finished)
    }

    var state: State { current.withLock { $0 } }

    var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// Runs `body`, recording how it ended; on failure calls `onFailure` (which wakes the response side).
    func run(_ body: @Sendable () async throws(BodyRelay.Failure) -> Void, onFailure: @Sendable () -> Void) async {
        if isFinished { return }
        do throws(BodyRelay.Failure) {
            try await body()
            current.withLock { $0 = .finished }
        } catch {
            current.withLock { $0 = .failed(error) }
            onFailure()
        }
    }
}
