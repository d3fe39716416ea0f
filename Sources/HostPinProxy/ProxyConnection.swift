import HostPin
import HostPinNet
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One client connection: reads request heads one after another (keep-alive), and for each one
/// forwards an absolute-form request to its pinned origin, opens a CONNECT tunnel, or answers with a
/// ``ProxyError``.
///
/// The states are the steps of ``run()``: wait for a head's first byte (idle; the head timeout for the
/// first request, the idle timeout between requests) → read the head (busy from here; the head timeout)
/// → parse → decide by the rules (``RuleRouter``; a local answer is sent here, then back to waiting) →
/// resolve (or take a pin rule's addresses) and connect → send the head and, concurrently, the body
/// while waiting for the response head (origin timeout; 1xx responses are passed on) → relay the
/// response body → back to waiting, or close. A tunnel or any
/// error ends the connection, and so does a stopping proxy (``ConnectionSlot``) once the request is done.
struct ProxyConnection: Sendable {
    let client: SocketChannel
    let configuration: ForwardProxy.Configuration
    /// The rules in force: read once per request.
    let rules: LiveRules
    let connector: OriginConnector
    let parser: RequestHeadParser
    let keeper: OriginKeeper
    /// This connection's place among the proxy's connections: idle or busy, and whether the proxy stops.
    let slot: ConnectionSlot

    /// What one request left behind.
    private struct Outcome {
        var status: Int
        var bytes: UInt64 = 0
        var pinned: SocketAddress?
        /// Where the pinned addresses came from.
        var source: AddressSource?
        var keepAlive = false
        /// Whether the origin connection may carry another request: the response was HTTP/1.1, framed by
        /// length or chunks (or had no body), without `Connection: close`, relayed whole, and nothing
        /// followed it.
        var originReusable = false
    }

    /// Why one attempt on an origin connection failed.
    private enum AttemptFailure: Error {
        /// Answer the client with this error.
        case refused(ProxyError)
        /// A kept connection turned out dead before any response byte: the head could not be written, or
        /// the first read met end of stream or a reset. Retried once on a fresh connection when the
        /// request is idempotent and has no body (RFC 9110 §9.2.2).
        case stale(ProxyError)
    }

    /// Where ``start(_:input:kept:)`` picks the connection up: at its opening, or where a
    /// ``KeepAliveRelay`` hands it back.
    enum Start: Sendable {
        /// The first request: its head must be complete within the head timeout of the opening.
        case opening
        /// Between requests: the next one's first byte within the idle timeout.
        case idle
        /// A request has begun (the slot is busy): its head, whole or in part, is in the input.
        case requestBegun(headDeadline: ContinuousClock.Instant)
        /// A request was forwarded on the kept origin connection; its response, head first, is in the
        /// origin's input.
        case response(PendingResponse)
        /// Answer this error and close.
        case refusing(ProxyError, method: String, target: String, started: ContinuousClock.Instant)
    }

    /// A request forwarded by a ``KeepAliveRelay`` whose response the task relays.
    struct PendingResponse: Sendable {
        let head: RequestHead
        let source: AddressSource
        let started: ContinuousClock.Instant
        let when: (unixSeconds: Int, nanoseconds: Int)
    }

    /// Serves the connection from `start` in a task on the event loop that reports its socket's edges
    /// (its jobs run there, with no hop to Swift's pool and back for every wait: EventLoop's
    /// documentation), until the client closes it, an error ends it, the proxy stops, or a
    /// ``KeepAliveRelay`` takes it over. `input` and `kept` carry the client's unread bytes and the
    /// kept origin connection across such a hand-over.
    func start(_ start: Start, input: BufferedInput? = nil, kept: KeptOrigin? = nil) {
        let input = input ?? BufferedInput(channel: client)
        // Attached before the task exists: a relay the task starts attaches after it, never before.
        let cancel = TaskCancel()
        slot.registry.attach(cut: { cancel.cancel() }, to: slot.id)
        cancel.set(Task(executorPreference: EventLoop.shared) {
            await run(from: start, input: input, kept: kept)
        })
    }

    private func run(from start: Start, input: BufferedInput, kept: KeptOrigin?) async {
        var kept = kept
        var step = start
        while true {
            let headDeadline: ContinuousClock.Instant
            switch step {
            case .opening:
                headDeadline = .after(configuration.requestHeadTimeout)
                guard await input.awaitBytes(deadline: headDeadline), slot.beginRequest() else { return end(kept) }
            case .idle:
                guard await input.awaitBytes(deadline: .after(configuration.idleTimeout)) else { return end(kept) }
                headDeadline = .after(configuration.requestHeadTimeout)
                guard slot.beginRequest() else { return end(kept) }
            case .requestBegun(let deadline):
                headDeadline = deadline
            case .response(let pending):
                guard let origin = kept, await serveResponse(pending, on: origin, kept: &kept), slot.endRequest() else {
                    return end(kept)
                }
                if handOver(input: input, kept: kept) { return }
                step = .idle
                continue
            case .refusing(let error, let method, let target, let started):
                await refuse(error, method: method, target: target, started: started)
                return end(kept)
            }
            guard await serveNext(input: input, headDeadline: headDeadline, kept: &kept), slot.endRequest() else {
                return end(kept)
            }
            if handOver(input: input, kept: kept) { return }
            step = .idle
        }
    }

    /// Reads, parses and serves the request whose head has begun; returns whether the connection stays
    /// open for another.
    private func serveNext(input: BufferedInput, headDeadline: ContinuousClock.Instant, kept: inout KeptOrigin?) async -> Bool {
        let bytes: [UInt8]?
        do throws(BufferedInput.HeadFailure) {
            bytes = try await input.readHead(limits: configuration.headLimits, deadline: headDeadline, skippingEmptyLines: true)
        } catch {
            switch error {
            case .head(let problem):
                await refuse(.malformedRequest(problem), method: "-", target: "-", started: ContinuousClock.now)
            case .socket(.timedOut):
                await refuse(.requestHeadTimedOut(timeout: configuration.requestHeadTimeout), method: "-", target: "-",
                             started: ContinuousClock.now)
            case .socket, .truncated:
                break
            }
            return false
        }
        guard let bytes else { return false }
        let started = ContinuousClock.now
        let head: RequestHead
        do throws(HeadError) {
            head = try parser.parse(bytes)
        } catch {
            await refuse(.malformedRequest(error), method: "-", target: "-", started: started)
            return false
        }
        return await serve(head, input: input, kept: &kept, started: started)
    }

    /// Passes the connection to a ``KeepAliveRelay`` when it can serve the next requests (an origin
    /// connection is kept, nothing is buffered, no rules are in force); returns whether it did.
    private func handOver(input: BufferedInput, kept: KeptOrigin?) -> Bool {
        guard let kept, let relay = KeepAliveRelay(connection: self, input: input, kept: kept) else { return false }
        relay.start()
        return true
    }

    /// Closes the connection and the origin connection it keeps, and frees its slot.
    func end(_ kept: KeptOrigin?) {
        if let kept { discard(kept) }
        client.close()
        // Counted closed before it leaves the registry: a stop that waits for the registry to empty must
        // find every connection counted closed (ProxyMetricsTests saw one still open).
        configuration.metrics?.connectionClosed()
        slot.registry.remove(slot.id)
    }

    /// Serves one request; returns whether the connection stays open for another. `kept` is the origin
    /// connection left open by the previous request, if any, and on return the one this request leaves.
    private func serve(_ head: RequestHead, input: BufferedInput, kept: inout KeptOrigin?,
                       started: ContinuousClock.Instant) async -> Bool {
        switch head.target {
        case .originForm, .asteriskForm:
            await refuse(.notAProxyRequest(target: head.targetText), method: head.method, target: head.targetText, started: started)
            return false
        case .authorityForm(let authority):
            if let previous = kept {
                kept = nil
                discard(previous)
            }
            await Tunnel(connection: self, input: input).open(head, authority: authority, started: started)
            return false
        case .absoluteForm(let authority, let path):
            let when = AccessLogEntry.now()
            let routed = RuleRouter(rules: rules.current).route(head, authority: authority, path: path)
            let outcome: Outcome
            switch routed.route {
            case .refuse(let error):
                await refuse(error, method: head.method, target: head.targetText, rules: routed.rules, started: started)
                return false
            case .answer(let answer):
                outcome = await send(answer, for: head)
            case .forward(let target):
                do throws(ProxyError) {
                    outcome = try await forward(head, to: target, input: input, kept: &kept)
                } catch {
                    await refuse(error, method: head.method, target: head.targetText, rules: routed.rules, started: started)
                    return false
                }
            }
            log(head.method, head.targetText, outcome.pinned, outcome.status, outcome.bytes, started, when,
                rules: routed.rules, source: outcome.source)
            return outcome.keepAlive
        }
    }

    /// Sends a response the proxy makes itself (a `respond` rule's, or a `redirect` rule's 3xx). The
    /// connection stays open for another request only when this one had no body: the body is not read,
    /// and its bytes could not be told apart from a next request.
    private func send(_ answer: LocalAnswer, for head: RequestHead) async -> Outcome {
        let keepAlive = head.wantsKeepAlive && head.framing == .none && !slot.isStopping
        var fields = HeaderFields()
        for (name, value) in answer.headers { fields.append(name: name, value: value) }
        fields.append(name: "Via", value: "1.1 \(configuration.viaPseudonym)")
        if !keepAlive { fields.append(name: "Connection", value: "close") }
        let bytes = Array("HTTP/1.1 \(answer.status) \(ReasonPhrase.for(answer.status))\r\n".utf8) + fields.wireBytes
            + [HeadSyntax.cr, HeadSyntax.lf] + Array(answer.body)
        var outcome = Outcome(status: answer.status)
        do throws(SocketError) {
            try await client.write(bytes, deadline: .after(configuration.idleTimeout))
        } catch {
            return outcome
        }
        outcome.bytes = UInt64(answer.body.count)
        outcome.keepAlive = keepAlive
        if !keepAlive { client.shutdownWrite() }
        return outcome
    }

    /// Forwards one absolute-form request, on the kept origin connection when it matches, else on a new
    /// one. Throws only before any response byte reached the client; later failures end the connection
    /// (reported through the outcome's `keepAlive == false`).
    private func forward(_ head: RequestHead, to target: ForwardTarget, input: BufferedInput,
                         kept: inout KeptOrigin?) async throws(ProxyError) -> Outcome {
        let authority = target.authority
        let pinning = try await connector.addresses(for: authority, target.addresses)
        let addresses = pinning.addresses
        connector.probeUnmeasured(authority, addresses)
        let retryable = head.framing == .none && Self.idempotentMethods.contains(head.method)
        var origin: KeptOrigin?
        if let previous = kept {
            kept = nil
            // Never across hosts: the same pinned address (still pinned now) and the same Host.
            if previous.key.host == authority.text, addresses.contains(previous.key.address),
               previous.claim(retryable: retryable)
            {
                origin = previous
            } else {
                discard(previous)
            }
        }
        while true {
            let reused = origin != nil
            let current: KeptOrigin
            if let origin {
                current = origin
            } else {
                let connection = try await connector.connect(host: authority.host, addresses: addresses, recordsTime: true)
                current = KeptOrigin(address: connection.address, authority: authority, channel: connection.channel,
                                     generation: keeper.generation)
            }
            origin = nil
            var outcome: Outcome
            do throws(AttemptFailure) {
                outcome = try await attempt(head, to: target, input: input, on: current, reused: reused)
            } catch {
                discard(current)
                switch error {
                case .refused(let problem):
                    throw problem
                case .stale(let problem):
                    guard reused, retryable else { throw problem }
                    continue  // once: the next attempt is on a fresh connection, whose failures are not stale
                }
            }
            outcome.source = pinning.source
            kept = keep(current, after: outcome, registered: reused)
            return outcome
        }
    }

    /// Methods whose requests may be sent again when a kept connection fails before any response byte
    /// (RFC 9110 §9.2.2).
    private static let idempotentMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]

    /// Parks `origin` for the next request when `outcome` allows (and has the keeper watch it unless it
    /// is `registered`), else closes it; returns it when kept.
    private func keep(_ origin: KeptOrigin, after outcome: Outcome, registered: Bool) -> KeptOrigin? {
        guard outcome.originReusable && outcome.keepAlive else {
            discard(origin)
            return nil
        }
        origin.park()
        if !registered { keeper.register(origin) }
        return origin
    }

    /// Relays the response to a request a ``KeepAliveRelay`` forwarded on `origin` (the kept connection,
    /// registered), logs it, and returns whether the connection stays open for another request.
    private func serveResponse(_ pending: PendingResponse, on origin: KeptOrigin, kept: inout KeptOrigin?) async -> Bool {
        let head = pending.head
        var outcome: Outcome
        do throws(AttemptFailure) {
            // Not `reused`: the relay read the response's first bytes, so the connection was not stale.
            outcome = try await relayResponse(head, from: origin.input, origin: origin.key.address, reused: false)
        } catch {
            kept = nil
            discard(origin)
            switch error {
            case .refused(let problem), .stale(let problem):
                await refuse(problem, method: head.method, target: head.targetText, started: pending.started)
            }
            return false
        }
        outcome.source = pending.source
        kept = keep(origin, after: outcome, registered: true)
        log(head.method, head.targetText, outcome.pinned, outcome.status, outcome.bytes, pending.started, pending.when,
            rules: [], source: outcome.source)
        return outcome.keepAlive
    }

    /// Closes an origin connection this client connection holds and forgets it.
    func discard(_ origin: KeptOrigin) {
        origin.close()
        keeper.unregister(origin)
    }

    /// Sends the request on `origin` and relays the response.
    private func attempt(_ head: RequestHead, to target: ForwardTarget, input: BufferedInput, on origin: KeptOrigin,
                         reused: Bool) async throws(AttemptFailure) -> Outcome {
        let address = origin.key.address
        let channel = origin.channel
        let via = configuration.viaPseudonym
        do throws(SocketError) {
            try await channel.write(ForwardedHead.request(head, authority: target.authority, path: target.path, via: via,
                                                          closing: !head.wantsKeepAlive, edits: target.headerEdits),
                                    deadline: .after(configuration.idleTimeout))
        } catch {
            throw reused ? .stale(.originClosed(address)) : .refused(.originClosed(address))
        }
        guard head.framing != .none else {
            // Nothing to upload: no task beside the response (a child task per request cost a task
            // allocation and a scheduling round trip).
            return try await relayResponse(head, from: origin.input, origin: address, reused: reused)
        }
        let upload = Upload()
        let configuration = configuration
        async let uploaded: Void = upload.run {
            () async throws(BodyRelay.Failure) -> Void in
            var sent: UInt64 = 0  // the access log counts what the client got, not what it sent
            try await BodyRelay.relay(head.framing, from: input, to: channel,
                                      coding: head.framing == .chunked ? .chunked : .identity,
                                      idle: configuration.idleTimeout,
                                      counter: RelayCounter(configuration.metrics, .toOrigin), relayed: &sent)
        } onFailure: {
            channel.shutdown()
        }
        var outcome = Outcome(status: 502, pinned: address)
        do throws(AttemptFailure) {
            outcome = try await relayResponse(head, from: origin.input, origin: address, reused: reused)
        } catch {
            // Leaving the scope cancels the upload (its waits end with `.cancelled`) and awaits it.
            if case .failed(.malformedChunk(let problem)) = upload.state { throw .refused(.malformedBody(problem)) }
            throw error
        }
        // The origin may answer before the whole body arrived (one that does not need it). The upload goes
        // on: the client is still sending, and cutting it off would reset its connection, which can
        // destroy the response before the client reads it (RFC 9112 §9.6). The origin reads the rest or
        // closes, and each read and write of the upload has the idle timeout, so this wait is bounded.
        await uploaded
        if case .failed = upload.state {
            outcome.keepAlive = false
            outcome.originReusable = false
            // The rest of the body was not read: it cannot be told apart from a next request, so the
            // connection ends, lingering (the same reset as above otherwise).
            await LingeringClose.drain(client)
        }
        return outcome
    }

    /// Reads the origin's response (passing 1xx responses on) and relays it to the client.
    private func relayResponse(_ head: RequestHead, from originInput: BufferedInput, origin: SocketAddress,
                               reused: Bool) async throws(AttemptFailure) -> Outcome
    {
        let deadline = ContinuousClock.Instant.after(configuration.originTimeout)
        var response: ResponseHead
        var firstRead = true
        while true {
            let bytes: [UInt8]?
            do throws(BufferedInput.HeadFailure) {
                bytes = try await originInput.readHead(limits: configuration.headLimits, deadline: deadline,
                                                       skippingEmptyLines: false)
            } catch {
                switch error {
                case .head(let problem): throw .refused(.badOriginResponse(origin, problem))
                case .socket(.timedOut): throw .refused(.originTimedOut(origin, timeout: configuration.originTimeout))
                case .socket(.system(_, let code)) where reused && firstRead && (code == ECONNRESET || code == EPIPE):
                    throw .stale(.originClosed(origin))
                case .socket, .truncated: throw .refused(.originClosed(origin))
                }
            }
            guard let bytes else {
                throw reused && firstRead ? .stale(.originClosed(origin)) : .refused(.originClosed(origin))
            }
            firstRead = false
            do throws(HeadError) {
                response = try ResponseHead.parse(bytes, limits: configuration.headLimits)
            } catch {
                throw .refused(.badOriginResponse(origin, error))
            }
            guard response.status < 200 else { break }
            if response.status == 101 { throw .refused(.badOriginResponse(origin, .malformedStatusLine)) }
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
            throw .refused(.badOriginResponse(origin, error))
        }
        let coding: BodyRelay.OutputCoding = framing == .chunked && head.version == .http11 ? .chunked : .identity
        let keepAlive = head.wantsKeepAlive && framing != .untilClose && !(framing == .chunked && coding == .identity)
            && !slot.isStopping
        var outcome = Outcome(status: response.status, pinned: origin)
        let forwarded = ForwardedHead.response(response, coding: coding, closing: !keepAlive, via: configuration.viaPseudonym)
        // Counted also when the relay fails: an origin gone mid-body still sent the client what got through.
        do throws(BodyRelay.Failure) {
            try await BodyRelay.relay(framing, from: originInput, to: client, coding: coding,
                                      idle: configuration.idleTimeout, leading: forwarded,
                                      counter: RelayCounter(configuration.metrics, .toClient), relayed: &outcome.bytes)
            outcome.keepAlive = keepAlive
            outcome.originReusable = response.version == .http11 && framing != .untilClose
                && !response.controlFields.contains("Connection", token: "close") && !originInput.hasBuffered
        } catch {
            outcome.keepAlive = false
        }
        return outcome
    }

    /// Sends `error` as the response, logs it (with the `rules` that decided the request), and drains the
    /// client's side (``LingeringClose``) so that closing the connection afterwards does not reset it
    /// before the client has read the response (a request body left unread made the 400 vanish).
    func refuse(_ error: ProxyError, method: String, target: String, rules: [RuleReference] = [],
                started: ContinuousClock.Instant) async {
        let when = AccessLogEntry.now()
        try? await client.write(error.response(via: configuration.viaPseudonym), deadline: .after(configuration.idleTimeout))
        log(method, target, nil, error.status, 0, started, when, rules: rules, source: nil, failure: error.resolutionFailure)
        await LingeringClose.drain(client)
    }

    /// Writes one access-log entry.
    func log(_ method: String, _ target: String, _ pinned: SocketAddress?, _ status: Int, _ bytes: UInt64,
             _ started: ContinuousClock.Instant, _ when: (unixSeconds: Int, nanoseconds: Int),
             rules: [RuleReference], source: AddressSource?, failure: String? = nil) {
        configuration.metrics?.recordRequest(method == "CONNECT" ? .connect : .http, status: status)
        guard let accessLog = configuration.accessLog else { return }
        accessLog(AccessLogEntry(unixSeconds: when.unixSeconds, nanoseconds: when.nanoseconds, client: client.peer,
                                 method: method, target: target, pinned: pinned, status: status, bytes: bytes,
                                 duration: ContinuousClock.now - started, rules: rules, source: source, failure: failure))
    }
}

/// Cancels a task that may not exist yet: one cancelled before it is set is cancelled when it is.
private final class TaskCancel: Sendable {
    /// Guards the task and whether it was cancelled.
    private let state = Mutex<(task: Task<Void, Never>?, cancelled: Bool)>((nil, false))

    func set(_ task: Task<Void, Never>) {
        let cancelled = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }

    func cancel() {
        let task = state.withLock { state -> Task<Void, Never>? in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
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

    /// Running from the start (a request without a body has no upload at all).
    init() {
        current = Mutex(.running)
    }

    var state: State { current.withLock { $0 } }

    var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// Runs `body`, recording how it ended; on failure calls `onFailure` (which wakes the response side).
    func run(_ body: @Sendable () async throws(BodyRelay.Failure) -> Void, onFailure: @Sendable () -> Void) async {
        do throws(BodyRelay.Failure) {
            try await body()
            current.withLock { $0 = .finished }
        } catch {
            current.withLock { $0 = .failed(error) }
            onFailure()
        }
    }
}
