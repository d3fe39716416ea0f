import Foundation
import HostPin

/// `hostpin ctl`'s side of the control socket: one connection per request, one line each way. Blocking
/// calls: run it on a thread of its own (``Blocking``).
package enum ControlClient {
    /// How long the service may take to reply.
    package static let timeout = 5
    /// The longest reply read, in octets.
    package static let replyLimit = 1 << 20

    /// Whether `path` names a socket file (following symbolic links, as connect(2) does).
    private static func isSocket(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFSOCK
    }

    /// Sends `request` to the socket at `path` and returns the reply's JSON object.
    package static func send(_ request: ControlRequest, to path: String) -> Result<[String: JSONValue], ControlSocketError> {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return .failure(.system(path: path, call: "socket", reason: UnixSocketAddress.reason(errno))) }
        defer { close(descriptor) }
        guard UnixSocketAddress.with(path, { connect(descriptor, $0, $1) }) == 0 else {
            let error: ControlSocketError = switch errno {
            case ENOENT: .missing(path: path)
            case EACCES, EPERM: .permissionDenied(path: path)
            // connect(2) says ECONNREFUSED for a regular file too: only a socket file is a stale one.
            case ECONNREFUSED: Self.isSocket(path) ? .notListening(path: path) : .noSocket(path: path)
            case let code: .system(path: path, call: "connect", reason: UnixSocketAddress.reason(code))
            }
            return .failure(error)
        }
        var timeout = timeval(tv_sec: Self.timeout, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let line = Array((request.line + "\n").utf8)
        let sent = line.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == line.count else {
            return .failure(.system(path: path, call: "send", reason: UnixSocketAddress.reason(errno)))
        }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while reply.count <= replyLimit, !reply.contains(0x0A) {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count < 0 { return .failure(.badReply(path: path, reason: UnixSocketAddress.reason(errno))) }
            if count == 0 { break }
            reply += buffer[..<count]
        }
        guard let end = reply.firstIndex(of: 0x0A),
              case .object(let fields)? = try? JSONDecoder().decode(JSONValue.self, from: Data(reply[..<end])) else {
            return .failure(.badReply(path: path, reason: reply.isEmpty ? "the connection closed without one" : "not one line of JSON"))
        }
        return .success(fields)
    }
}
