import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The body of an intercepted request, wherever Foundation put it.
///
/// `URLRequest.httpBody` and `httpBodyStream` reach a protocol in its request, but an upload task's body
/// (`uploadTask(with:from:)`, `uploadTask(with:fromFile:)`) stays in the task (swift-corelibs-foundation's
/// internal `knownBody`), out of a custom protocol's reach. Only an upload task keeps it there (every other
/// task's `knownBody` is its request's body), and HostPin reads an upload task's by reflection, as it reads
/// the task's delivery behaviour (``ResponseDelivery``); where neither finds a body that an upload task
/// must have, the request fails (``missingUploadBody``) rather than go out empty.
enum RequestBody: Sendable {
    case none
    case data(Data)
    case file(URL)
    case stream(OneShotStream)

    /// The body of `request` as `task` will send it. Call on FoundationNetworking's work queue.
    init(request: URLRequest, task: URLSessionTask?) {
        if let data = request.httpBody {
            self = .data(data)
        } else if let stream = request.httpBodyStream {
            self = .stream(OneShotStream(stream))
        } else if let task = task as? URLSessionUploadTask, let known = Reflection.child("knownBody", of: task),
                  let kind = Mirror(reflecting: known).children.first {
            switch (kind.label, kind.value) {
            case ("data", let data as DispatchData): self = .data(Data(data))
            case ("file", let url as URL): self = .file(url)
            case ("stream", let stream as InputStream): self = .stream(OneShotStream(stream))
            default: self = .none
            }
        } else {
            self = .none
        }
    }

    /// Why an upload task cannot be sent: Foundation kept its body where HostPin cannot read it (a
    /// streamed-request upload task asks its delegate for the stream, which a protocol cannot do).
    static let missingUploadBody = "HostPin cannot read this upload task's body on Linux; "
        + "use a data task with URLRequest.httpBody or httpBodyStream instead"

    /// The body as a stream to read once, for transports that stream it; `nil` when there is none.
    func inputStream() -> InputStream? {
        switch self {
        case .none: nil
        case .data(let data): InputStream(data: data)
        case .file(let url): InputStream(url: url)
        case .stream(let stream): stream.take()
        }
    }

    /// The body's length in bytes when known in advance.
    var length: Int? {
        switch self {
        case .none: 0
        case .data(let data): data.count
        case .file(let url): (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue
        case .stream: nil
        }
    }

    /// Whether the body can be sent again (a 307/308 redirect repeats it): a stream cannot.
    var isReplayable: Bool {
        if case .stream = self { return false }
        return true
    }
}

/// An `InputStream` handed to exactly one reader.
///
/// @unchecked Sendable: `InputStream` is not Sendable. `lock` guards `stream`, which ``take()`` hands
/// out once; only the one transfer that took it reads it, on its own thread.
final class OneShotStream: @unchecked Sendable {
    private let lock = NSLock()
    private var stream: InputStream?

    init(_ stream: InputStream) {
        self.stream = stream
    }

    func take() -> InputStream? {
        lock.withLock {
            defer { stream = nil }
            return stream
        }
    }
}
