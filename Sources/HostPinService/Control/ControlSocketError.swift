/// Why the control socket cannot be served or reached. Closed: each sentence written once, here.
public enum ControlSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path names something that is not a socket: it is left alone.
    case notASocket(path: String)
    /// Another process serves that socket.
    case inUse(path: String)
    /// Nothing exists at the path (client side: no service serves it).
    case missing(path: String)
    /// The socket belongs to another user (the file's mode, or the server's check of the peer).
    case permissionDenied(path: String)
    /// A stale socket file: nothing listens on it.
    case notListening(path: String)
    /// Client side: the path names something that is not a socket (a regular file, a folder).
    case noSocket(path: String)
    /// A system call failed: which, and the C library's reason.
    case system(path: String, call: String, reason: String)
    /// The service answered nothing, or something that is not a reply.
    case badReply(path: String, reason: String)

    public var description: String {
        switch self {
        case .notASocket(let path): "\(path) exists and is not a socket; it is left alone: choose another path or remove it"
        case .inUse(let path): "another process serves the control socket \(path)"
        case .missing(let path):
            "no control socket at \(path): is hostpin serve (or proxy) running with --control-socket \(path)?"
        case .permissionDenied(let path): "the control socket \(path) belongs to another user: run hostpin ctl as the service's user (or root)"
        case .notListening(let path): "nothing listens on the control socket \(path) (a stale file: the service is not running)"
        case .noSocket(let path): "\(path) is not a socket: is hostpin serve (or proxy) running with --control-socket \(path)?"
        case .system(let path, let call, let reason): "control socket \(path): \(call): \(reason)"
        case .badReply(let path, let reason): "the service at \(path) gave no usable reply: \(reason)"
        }
    }
}
