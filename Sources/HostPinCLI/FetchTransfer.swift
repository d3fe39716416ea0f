import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPinService
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One `hostpin fetch` transfer: the session delegate that writes the response as it streams in (to
/// standard output or `-o FILE`; with `-i` the status line and headers first), enforces `--fail` and
/// `--max-time`, and reports how the transfer ended.
///
/// The session's delegate queue is serial, so the response and its chunks arrive one at a time and in
/// order; the state is behind a `Mutex` only because `--max-time` ends the transfer from another task.
final class FetchTransfer: NSObject, URLSessionDataDelegate, Sendable {
    /// How a transfer ended.
    enum Outcome: Sendable {
        /// The whole response arrived and was written.
        case completed(status: Int)
        /// `--fail` and a status of 400 or more: nothing of the body was written.
        case httpError(status: Int)
        /// The transfer failed; `responded` tells whether a response had arrived first.
        case failed(URLError, responded: Bool)
        /// `--max-time` ran out after `received` body bytes.
        case maxTimeExceeded(received: Int64)
        /// The output could not be opened or written.
        case writeFailed(path: String, reason: String)
    }

    /// Where the response goes.
    enum Destination: Sendable, Equatable {
        case standardOutput
        case file(String)

        var label: String {
            switch self {
            case .standardOutput: "standard output"
            case .file(let path): path
            }
        }
    }

    /// What the command line asked for.
    struct Options: Sendable {
        var destination: Destination = .standardOutput
        var includeHeaders = false
        var failOnHTTPError = false
    }

    private struct State {
        var task: URLSessionDataTask?
        var output: FileHandle?
        var responded = false
        var received: Int64 = 0
        /// Set when the transfer's end is decided before Foundation reports it (`--fail`, a write error,
        /// `--max-time`): the completion then reports this instead of the cancellation it causes.
        var decided: Outcome?
        var outcome: Outcome?
        var continuation: CheckedContinuation<Outcome, Never>?
    }

    private let options: Options
    private let state = Mutex(State())
    /// The cancels ``stop(_:)`` has started and not finished.
    private let cancels = DispatchGroup()

    init(options: Options) {
        self.options = options
    }

    /// Runs `task` to its end and returns how it ended; `maxTime` bounds the whole transfer (resolution
    /// included) and cancels it when it runs out.
    func run(_ task: URLSessionDataTask, maxTime: Duration?) async -> Outcome {
        var timer: Task<Void, Never>?
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            state.withLock {
                $0.task = task
                $0.continuation = continuation
            }
            timer = maxTime.map { limit in
                Task { [self] in
                    guard (try? await Task.sleep(for: limit)) != nil else { return }
                    expire()
                }
            }
            task.resume()
        }
        timer?.cancel()
        await Blocking.run { [cancels] in _ = cancels.wait(timeout: .now() + 2) }
        state.withLock { state in
            state.task = nil
            if case .file = options.destination { try? state.output?.close() }
            state.output = nil
        }
        return outcome
    }

    // MARK: URLSessionDataDelegate

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        // swift-corelibs-foundation ignores the disposition for custom protocols: stopping means cancel().
        completionHandler(.allow)
        guard let http = response as? HTTPURLResponse else { return }
        let proceed = state.withLock { state -> Bool in
            guard state.decided == nil, state.outcome == nil else { return false }
            state.responded = true
            if options.failOnHTTPError, http.statusCode >= 400 {
                state.decided = .httpError(status: http.statusCode)
                return false
            }
            return true
        }
        guard proceed else { return stop(dataTask) }
        guard openOutput() else { return stop(dataTask) }
        if options.includeHeaders, !write(Self.head(of: http)) { stop(dataTask) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let writing = state.withLock { state -> Bool in
            guard state.decided == nil, state.outcome == nil, state.output != nil else { return false }
            state.received += Int64(data.count)
            return true
        }
        guard writing else { return }
        if !write(data) { stop(dataTask) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let outcome = state.withLock { state -> Outcome in
            if let decided = state.decided { return decided }
            if let error {
                return .failed(error as? URLError ?? URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error]),
                               responded: state.responded)
            }
            return .completed(status: (task.response as? HTTPURLResponse)?.statusCode ?? 0)
        }
        finish(outcome)
    }

    // MARK: Ending

    /// `--max-time` ran out: cancel the task; its completion reports the timeout. Should Foundation never
    /// report back, the transfer ends a second later anyway.
    private func expire() {
        let task = state.withLock { state -> URLSessionDataTask? in
            guard state.decided == nil, state.outcome == nil else { return nil }
            state.decided = .maxTimeExceeded(received: state.received)
            return state.task
        }
        guard let task else { return }
        cancels.enter()
        task.cancel()
        cancels.leave()
        Task { [self] in
            try? await Task.sleep(for: .seconds(1))
            let decided = state.withLock { $0.decided }
            if let decided { finish(decided) }
        }
    }

    /// Cancels `task` from outside Foundation's queues (where `cancel()` may `sync` onto a queue it is on),
    /// unless it has ended meanwhile. ``run(_:maxTime:)`` waits for these cancels before it returns, so
    /// none is still inside Foundation when the process exits.
    private func stop(_ task: URLSessionDataTask) {
        cancels.enter()
        Thread { [self] in
            defer { cancels.leave() }
            if state.withLock({ $0.outcome == nil }) { task.cancel() }
        }.start()
    }

    /// Resumes the waiting ``run(_:maxTime:)`` once, with the first outcome decided.
    private func finish(_ outcome: Outcome) {
        let continuation = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: outcome)
    }

    // MARK: Output

    /// Opens the destination when the response arrives (so `--fail` and failures create no file, as in
    /// curl); records a write failure when it cannot.
    private func openOutput() -> Bool {
        let handle: FileHandle
        switch options.destination {
        case .standardOutput:
            handle = FileHandle.standardOutput
        case .file(let path):
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
            guard descriptor >= 0 else {
                fail(writing: path, reason: String(cString: strerror(errno)))
                return false
            }
            handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        }
        state.withLock { $0.output = handle }
        return true
    }

    /// Writes `data` to the open destination; records a write failure when it cannot.
    private func write(_ data: Data) -> Bool {
        guard let output = state.withLock({ $0.output }) else { return false }
        do {
            try output.write(contentsOf: data)
            return true
        } catch {
            fail(writing: options.destination.label, reason: FileAccess.reason(error))
            return false
        }
    }

    private func fail(writing path: String, reason: String) {
        state.withLock { state in
            if state.decided == nil { state.decided = .writeFailed(path: path, reason: reason) }
        }
    }

    /// `-i`'s head: `HTTP/1.1 <code> <reason>`, then one `Name: value` line per header field (sorted by
    /// name: Foundation does not keep the order on the wire), then an empty line; CRLF line ends, as curl
    /// passes them through from the wire.
    static func head(of response: HTTPURLResponse) -> Data {
        var lines = ["HTTP/1.1 \(response.statusCode) \(ReasonPhrase.forStatus(response.statusCode))"]
        let fields = response.allHeaderFields.compactMap { field -> (String, String)? in
            guard let name = field.key as? String else { return nil }
            return (name, field.value as? String ?? "\(field.value)")
        }
        for (name, value) in fields.sorted(by: { $0.0.lowercased() < $1.0.lowercased() }) {
            lines.append("\(name): \(value)")
        }
        return Data((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }
}
