import HostPin
import HostPinNet
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Serves a keep-alive client's next requests to the origin connection it keeps, driven by the event
/// loop's callbacks (``ReadinessHandler``) instead of a task: the shape of an event-driven server's
/// connection, with no task, async frame or continuation per step, and buffers kept across requests.
///
/// It takes over from ``ProxyConnection`` after a request left an origin connection kept, with no rules
/// in force and nothing buffered, and serves the common exchange itself: a `GET` or `HEAD` without a
/// body to the same authority, whose cached addresses still include the kept connection's, answered
/// with a final HTTP/1.1 response framed by `Content-Length` (or without a body). Anything else goes
/// back to the connection's task at the step it reached, with every byte read put back in the input it
/// came from: a request the fast path does not serve (a body, another host, rules loaded since, a
/// cache miss, a head it cannot read) at ``ProxyConnection/Start/requestBegun(headDeadline:)``, where
/// the task reads the head again and decides as for any request (refusals included); a kept connection
/// that turns out dead before any response byte likewise, so the task sends the request again on a
/// fresh one (RFC 9110 §9.2.2); a response the fast path does not relay (1xx, chunked, until close,
/// HTTP/1.0) at ``ProxyConnection/Start/response(_:)``. The steps are those of ``ProxyConnection``, with
/// the same timeouts, head checks, `Connection: close` at a stop, access-log entries and metrics.
///
/// The relay waits for one edge at a time, so its steps never run concurrently; they run on the loop
/// thread, or on the thread of a ``ConnectionRegistry/cutAll()`` that shuts its sockets down.
final class KeepAliveRelay: ReadinessHandler {
    /// The step the next callback continues.
    private enum Phase {
        /// Waiting for the next request's first byte (the idle timeout).
        case awaitingRequest(deadline: ContinuousClock.Instant)
        /// Reading the head (the head timeout, from its first byte).
        case readingHead(deadline: ContinuousClock.Instant)
        /// Sending the forwarded head to the origin.
        case sendingHead
        /// Reading the response head (the origin timeout).
        case awaitingResponse(deadline: ContinuousClock.Instant)
        /// Sending the response and its body to the client.
        case relaying
    }

    /// The request being served (its head stays in ``State/request`` until the exchange is over).
    private struct Exchange {
        /// `GET` or `HEAD`.
        let method: String
        /// The request-target's bytes in ``State/request``, for the access log (a string made only there).
        let target: Range<Int>
        let wantsKeepAlive: Bool
        let source: AddressSource
        let started: ContinuousClock.Instant
        let when: (unixSeconds: Int, nanoseconds: Int)
        var status = 502
        var keepAlive = false
        var originReusable = false
    }

    /// How far a response body has come: scalars of their own, so a step of the body's relay does not
    /// copy the ``Exchange`` (its head's strings and arrays, a retain each).
    private struct BodyProgress {
        /// Body bytes the client got.
        var bytes: UInt64 = 0
        /// Body bytes still to read from the origin.
        var remaining: UInt64 = 0
        /// Body bytes in `out`, counted once written.
        var inOut = 0
    }

    private struct State {
        var phase: Phase
        var exchange: Exchange?
        var body = BodyProgress()
        /// The request head read so far, kept until the exchange is over: a stale origin connection hands
        /// it back to the task to send again, a response the task relays needs it parsed, the access log
        /// its target.
        var request: [UInt8] = []
        /// The response head read so far.
        var response: [UInt8] = []
        /// Bytes to send (a head, a body read) and how many of them are sent.
        var out: [UInt8] = []
        var sent = 0
        /// Where reads land before they are appended or sent on.
        var scratch = [UInt8](repeating: 0, count: KeepAliveRelay.bufferSize)
    }

    /// How the relay ends.
    private enum Exit {
        /// The connection closes (the client left, a timeout, the proxy stops, a failure mid-response).
        case close
        /// The connection's task continues from `start`.
        case handBack(ProxyConnection.Start, keepingOrigin: Bool)
    }

    /// What one step decided.
    private enum Step {
        /// Go on at once (the phase changed, or bytes moved).
        case next
        /// Wait for `direction` of `channel` (`deadline`).
        case wait(SocketChannel, IODirection, ContinuousClock.Instant)
        case exit(Exit)
    }

    /// The size of the one buffer reads land in: a whole head or body read, as nginx's 16 KiB buffers.
    static let bufferSize = 16 * 1024

    private let connection: ProxyConnection
    private let input: BufferedInput
    private let kept: KeptOrigin
    /// The ``LiveRules/generation`` when the relay took over with no rules: a reload hands back.
    private let rulesGeneration: UInt64
    private let counter: RelayCounter?
    /// Guards the phase, the request being served and the buffers; taken for each callback's steps.
    private let state: Mutex<State>

    /// A relay for `connection`, whose client's `input` holds nothing and whose last request left `kept`
    /// parked; `nil` when rules are in force (their decisions are the task's) or bytes are buffered.
    init?(connection: ProxyConnection, input: BufferedInput, kept: KeptOrigin) {
        // Generation first: a replacement in between makes the next request hand back.
        let generation = connection.rules.generation
        guard connection.rules.current.isEmpty, !input.hasBuffered else { return nil }
        self.connection = connection
        self.input = input
        self.kept = kept
        rulesGeneration = generation
        counter = RelayCounter(connection.configuration.metrics, .toClient)
        state = Mutex(State(phase: .awaitingRequest(deadline: .after(connection.configuration.idleTimeout))))
    }

    /// Takes the connection over: the registry's cut now shuts the relay's sockets.
    func start() {
        let client = connection.client
        let origin = kept.channel
        connection.slot.registry.attach(cut: {
            client.shutdown()
            origin.shutdown()
        }, to: connection.slot.id)
        readiness(.success(()))
    }

    func readiness(_ result: Result<Void, SocketError>) {
        guard let exit = state.withLock({ advance(&$0, after: result) }) else { return }
        switch exit {
        case .close:
            connection.end(kept)
        case .handBack where connection.client.isShut:
            // A stop's cut, or the proxy closing idle connections: nothing more is served (a request
            // handed back now would be sent again on a fresh origin connection after the cut).
            connection.end(kept)
        case .handBack(let start, let keepingOrigin):
            if !keepingOrigin { connection.discard(kept) }
            connection.start(start, input: input, kept: keepingOrigin ? kept : nil)
        }
    }

    /// Runs steps until one waits for an edge that has not come (`nil`) or the relay ends.
    private func advance(_ state: inout State, after result: Result<Void, SocketError>) -> Exit? {
        var result = result
        while true {
            switch step(&state, result) {
            case .next:
                result = .success(())
            case .wait(let channel, let direction, let deadline):
                guard channel.notify(self, when: direction, deadline: deadline) else { return nil }
                result = .success(())
            case .exit(let exit):
                return exit
            }
        }
    }

    private func step(_ state: inout State, _ result: Result<Void, SocketError>) -> Step {
        switch state.phase {
        case .awaitingRequest(let deadline): awaitRequest(&state, result, deadline: deadline)
        case .readingHead(let deadline): readHead(&state, result, deadline: deadline)
        case .sendingHead: sendHead(&state, result)
        case .awaitingResponse(let deadline): awaitResponse(&state, result, deadline: deadline)
        case .relaying: relay(&state, result)
        }
    }

    // MARK: The request

    private func awaitRequest(_ state: inout State, _ result: Result<Void, SocketError>, deadline: ContinuousClock.Instant) -> Step {
        // The idle timeout, the client's FIN, a reset, a stop: the connection ends, as the task's does.
        guard case .success = result else { return .exit(.close) }
        switch receive(from: connection.client, appendingTo: &state.request, &state.scratch) {
        case .moved:
            guard connection.slot.beginRequest() else { return .exit(.close) }
            state.phase = .readingHead(deadline: .after(connection.configuration.requestHeadTimeout))
            return .next
        case .wouldBlock:
            return .wait(connection.client, .read, deadline)
        case .end, .failed:
            return .exit(.close)
        }
    }

    private func readHead(_ state: inout State, _ result: Result<Void, SocketError>, deadline: ContinuousClock.Instant) -> Step {
        guard case .success = result else { return handBackRequest(&state, deadline: deadline) }
        // A head that is not simply there, whole and alone (empty lines first, a pipelined request after
        // it, a malformed one): the task reads it again and answers as it does.
        if state.request.first == HeadSyntax.cr { return handBackRequest(&state, deadline: deadline) }
        let end: Int?
        do throws(HeadError) {
            end = try HeadSyntax.endOfHead(in: state.request, limits: connection.configuration.headLimits)
        } catch {
            return handBackRequest(&state, deadline: deadline)
        }
        if let end {
            guard end == state.request.count else { return handBackRequest(&state, deadline: deadline) }
            return forward(&state, deadline: deadline)
        }
        switch receive(from: connection.client, appendingTo: &state.request, &state.scratch) {
        case .moved: return .next
        case .wouldBlock: return .wait(connection.client, .read, deadline)
        case .end, .failed: return handBackRequest(&state, deadline: deadline)
        }
    }

    /// The head is whole: forward it on the kept connection if the fast path serves it (checked in its
    /// bytes: ``RelayRequest``).
    private func forward(_ state: inout State, deadline: ContinuousClock.Instant) -> Step {
        let started = ContinuousClock.now
        let authority = kept.authority
        guard connection.rules.generation == rulesGeneration,
              let request = RelayRequest.check(state.request, authority: authority),
              let source = pinned(authority)
        else { return handBackRequest(&state, deadline: deadline) }
        // Retryable (no body, idempotent): the loop's edges decide whether it is still open.
        guard kept.claim(retryable: true) else { return handBackRequest(&state, deadline: deadline, keepingOrigin: false) }
        state.exchange = Exchange(method: request.method, target: request.target, wantsKeepAlive: request.wantsKeepAlive,
                                  source: source, started: started, when: AccessLogEntry.now())
        state.out.removeAll(keepingCapacity: true)
        request.forwarded(authority: authority, via: connection.configuration.viaPseudonym, closing: !request.wantsKeepAlive,
                          to: &state.out)
        state.sent = 0
        state.phase = .sendingHead
        return .next
    }

    /// Where the kept connection's address comes from if `authority` may still go there; `nil` to ask
    /// the task (a cache miss, a refusal it answers, an answer that no longer holds the address).
    private func pinned(_ authority: RequestTarget.Authority) -> AddressSource? {
        // An IP literal answers itself: what the task decided for this authority (the resolver's
        // family, the rebinding guard, the proxy's own endpoint) holds unchanged.
        if authority.host.literalAddress != nil { return .resolved(.literal) }
        return connection.connector.cachedSource(keeping: kept.key.address, for: authority)
    }

    /// The task takes the request over from its head (the bytes read go back to the client's input).
    private func handBackRequest(_ state: inout State, deadline: ContinuousClock.Instant, keepingOrigin: Bool = true) -> Step {
        input.unread(state.request)
        state.request = []
        return .exit(.handBack(.requestBegun(headDeadline: deadline), keepingOrigin: keepingOrigin))
    }

    private func sendHead(_ state: inout State, _ result: Result<Void, SocketError>) -> Step {
        // The kept connection is dead before any response byte: the task sends the request again on a
        // fresh one (unless a stop's cut shut the sockets: then the connection ends, `readiness`).
        guard case .success = result else { return handBackStale(&state) }
        switch transmit(&state, to: kept.channel) {
        case .moved:
            state.response.removeAll(keepingCapacity: true)
            state.phase = .awaitingResponse(deadline: .after(connection.configuration.originTimeout))
            return .next
        case .wouldBlock:
            return .wait(kept.channel, .write, .after(connection.configuration.idleTimeout))
        case .end, .failed:
            return handBackStale(&state)
        }
    }

    private func handBackStale(_ state: inout State) -> Step {
        state.exchange = nil
        return handBackRequest(&state, deadline: .after(connection.configuration.requestHeadTimeout), keepingOrigin: false)
    }

    // MARK: The response

    private func awaitResponse(_ state: inout State, _ result: Result<Void, SocketError>, deadline: ContinuousClock.Instant) -> Step {
        let origin = kept.key.address
        let firstRead = state.response.isEmpty
        if case .failure(let error) = result {
            switch error {
            case .timedOut: return refuse(&state, .originTimedOut(origin, timeout: connection.configuration.originTimeout))
            case .closed: return cut(&state, .originClosed(origin))
            default: return refuse(&state, .originClosed(origin))
            }
        }
        switch receive(from: kept.channel, appendingTo: &state.response, &state.scratch) {
        case .moved:
            break
        case .wouldBlock:
            return .wait(kept.channel, .read, deadline)
        case .end:
            return firstRead ? handBackStale(&state) : refuse(&state, .originClosed(origin))
        case .failed(.system(_, let code)) where firstRead && (code == ECONNRESET || code == EPIPE):
            return handBackStale(&state)
        case .failed:
            return refuse(&state, .originClosed(origin))
        }
        let end: Int?
        do throws(HeadError) {
            end = try HeadSyntax.endOfHead(in: state.response, limits: connection.configuration.headLimits)
        } catch {
            return refuse(&state, .badOriginResponse(origin, error))
        }
        guard let end else { return .next }
        return respond(&state, headEnd: end)
    }

    /// The response head is whole: relay it if the fast path does, else hand it to the task.
    private func respond(_ state: inout State, headEnd end: Int) -> Step {
        guard var exchange = state.exchange else { return .exit(.close) }
        let origin = kept.key.address
        let response: ResponseHead
        do throws(HeadError) {
            response = try ResponseHead.parse(Array(state.response[..<end]), limits: connection.configuration.headLimits)
        } catch {
            return refuse(&state, .badOriginResponse(origin, error))
        }
        let length: UInt64
        switch try? response.framing(requestMethod: exchange.method) {
        case BodyFraming.none?: length = 0
        case .contentLength(let count)?: length = count
        default: return handBackResponse(&state, exchange)  // chunked, until close, or a framing error
        }
        guard response.status >= 200, response.status != 101, response.version == .http11 else {
            return handBackResponse(&state, exchange)
        }
        exchange.status = response.status
        exchange.keepAlive = exchange.wantsKeepAlive && !connection.slot.isStopping
        let body = state.response[end...]
        let now = min(UInt64(body.count), length)
        state.body = BodyProgress(bytes: 0, remaining: length - now, inOut: Int(now))
        // Bytes after the body: the connection cannot be told where the next response starts.
        exchange.originReusable = !response.controlFields.contains("Connection", token: "close") && UInt64(body.count) == now
        state.out.removeAll(keepingCapacity: true)
        ForwardedHead.appendResponse(response, coding: .identity, closing: !exchange.keepAlive,
                                     via: connection.configuration.viaPseudonym, to: &state.out)
        state.out.append(contentsOf: body.prefix(Int(now)))
        state.sent = 0
        state.exchange = exchange
        state.phase = .relaying
        return .next
    }

    /// The task relays the response (its bytes go back to the origin's input), for the request parsed
    /// as the task parses it (``RelayRequest`` took only heads the parser takes alike).
    private func handBackResponse(_ state: inout State, _ exchange: Exchange) -> Step {
        guard let head = try? connection.parser.parse(state.request, knownAuthority: kept.authority) else {
            return .exit(.close)
        }
        kept.input.unread(state.response)
        state.response = []
        state.request = []
        state.exchange = nil
        let pending = ProxyConnection.PendingResponse(head: head, source: exchange.source, started: exchange.started,
                                                      when: exchange.when)
        return .exit(.handBack(.response(pending), keepingOrigin: true))
    }

    /// The task answers `error` and closes (the origin connection is closed first).
    private func refuse(_ state: inout State, _ error: ProxyError) -> Step {
        guard let exchange = state.exchange else { return .exit(.close) }
        state.exchange = nil
        return .exit(.handBack(.refusing(error, method: exchange.method, target: targetText(state, exchange),
                                         started: exchange.started), keepingOrigin: false))
    }

    /// A stop's cut while the response head is awaited: the request is logged as the task logs the one
    /// it cuts there (the refusal `error` its client no longer gets), and the connection ends.
    private func cut(_ state: inout State, _ error: ProxyError) -> Step {
        if let exchange = state.exchange.take() {
            connection.log(exchange.method, targetText(state, exchange), nil, error.status, 0, exchange.started,
                           AccessLogEntry.now(), rules: [], source: nil, failure: error.resolutionFailure)
        }
        return .exit(.close)
    }

    private func relay(_ state: inout State, _ result: Result<Void, SocketError>) -> Step {
        // A failure mid-response: what got through is logged and the connection ends (the task's too).
        guard case .success = result else { return finish(&state, whole: false) }
        if state.sent < state.out.count {
            switch transmit(&state, to: connection.client) {
            case .moved:
                counter?.add(state.body.inOut)
                state.body.bytes += UInt64(state.body.inOut)
                state.body.inOut = 0
                return .next
            case .wouldBlock:
                return .wait(connection.client, .write, .after(connection.configuration.idleTimeout))
            case .end, .failed:
                return finish(&state, whole: false)
            }
        }
        guard state.body.remaining > 0 else { return finish(&state, whole: true) }
        let limit = Int(min(state.body.remaining, UInt64(Self.bufferSize)))
        state.out.removeAll(keepingCapacity: true)
        state.sent = 0
        switch receive(from: kept.channel, appendingTo: &state.out, &state.scratch, maximum: limit) {
        case .moved(let count):
            state.body.remaining -= UInt64(count)
            state.body.inOut = count
            return .next
        case .wouldBlock:
            return .wait(kept.channel, .read, .after(connection.configuration.idleTimeout))
        case .end, .failed:
            return finish(&state, whole: false)
        }
    }

    /// The response is over (whole, or cut short): log it, then wait for the next request or end.
    private func finish(_ state: inout State, whole: Bool) -> Step {
        guard let exchange = state.exchange.take() else { return .exit(.close) }
        connection.log(exchange.method, targetText(state, exchange), kept.key.address, exchange.status, state.body.bytes,
                       exchange.started, exchange.when, rules: [], source: exchange.source)
        guard whole, exchange.keepAlive else { return .exit(.close) }
        guard exchange.originReusable else {
            return connection.slot.endRequest() ? .exit(.handBack(.idle, keepingOrigin: false)) : .exit(.close)
        }
        kept.park()
        guard connection.slot.endRequest() else { return .exit(.close) }
        state.request.removeAll(keepingCapacity: true)
        state.phase = .awaitingRequest(deadline: .after(connection.configuration.idleTimeout))
        return .next
    }

    /// The exchange's request-target as received.
    private func targetText(_ state: State, _ exchange: Exchange) -> String {
        String(decoding: state.request[exchange.target], as: UTF8.self)
    }

    // MARK: Sockets

    /// Receives into the scratch buffer (at most `maximum` bytes) and appends what came to `bytes`.
    private func receive(from channel: SocketChannel, appendingTo bytes: inout [UInt8], _ scratch: inout [UInt8],
                         maximum: Int = KeepAliveRelay.bufferSize) -> SocketChannel.Transfer {
        let transfer = scratch.withUnsafeMutableBytes { buffer in
            channel.receive(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(maximum, buffer.count)]))
        }
        if case .moved(let count) = transfer { bytes.append(contentsOf: scratch[..<count]) }
        return transfer
    }

    /// Sends what is left of `out`; `.moved` once all of it is sent.
    private func transmit(_ state: inout State, to channel: SocketChannel) -> SocketChannel.Transfer {
        while state.sent < state.out.count {
            let sent = state.sent
            let transfer = state.out.withUnsafeBytes { channel.transmit(UnsafeRawBufferPointer(rebasing: $0[sent...])) }
            guard case .moved(let count) = transfer else { return transfer }
            state.sent += count
        }
        return .moved(state.out.count)
    }
}
