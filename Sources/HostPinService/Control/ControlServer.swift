import Foundation
import HostPin
import HostPinNet
import Synchronization

/// The control socket's server (`--control-socket PATH`): a Unix stream socket created with mode 0600,
/// served by a thread of its own (its calls block; never Swift's cooperative pool), one request per
/// connection, one line of JSON each way. A peer whose user is neither the service's nor root is refused
/// by the kernel's account of it (`SO_PEERCRED`), whatever the file's mode has become.
package final class ControlServer: Sendable {
    /// What answers a request: the reply's JSON object.
    package typealias Handler = @Sendable (ControlRequest) -> JSONValue

    /// Where the socket is.
    package let path: String
    private let descriptor: Int32
    /// The socket file's inode, so that stopping removes only this socket's file.
    private let inode: UInt
    /// Written to end the thread's `poll`.
    private let wake: (read: Int32, write: Int32)
    /// The thread's end: `true` once it has ended, or the stop waiting for it.
    private let ended = Mutex<(done: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    /// How long one connection may take to send its request and read the reply.
    package static let connectionTimeout: Int = 2

    /// Creates the socket at `path` and starts serving it with `handler`. A socket file left by a
    /// process that is gone (nothing listens on it) is replaced; a missing last folder is created
    /// (mode 0700).
    ///
    /// - Throws: ``ControlSocketError``: something other than a socket at the path (left alone), a
    ///   socket another process serves, or a system call's failure.
    package init(path: String, handler: @escaping Handler) throws(ControlSocketError) {
        self.path = path
        try Self.clear(path)
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        if access(folder, F_OK) != 0 { _ = mkdir(folder, 0o700) }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .system(path: path, call: "socket", reason: UnixSocketAddress.reason(errno)) }
        // The file is created by bind with 0777 less the umask: with 0177 it is never more than 0600,
        // not even for the instant before the chmod.
        let mask = umask(0o177)
        let bound = UnixSocketAddress.with(path) { bind(descriptor, $0, $1) }
        let bindError = errno
        umask(mask)
        var status = stat()
        guard bound == 0, chmod(path, 0o600) == 0, listen(descriptor, 16) == 0, stat(path, &status) == 0 else {
            let reason = UnixSocketAddress.reason(bound == 0 ? errno : bindError)
            close(descriptor)
            throw .system(path: path, call: bound == 0 ? "listen" : "bind", reason: reason)
        }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            close(descriptor)
            unlink(path)
            throw .system(path: path, call: "pipe", reason: UnixSocketAddress.reason(errno))
        }
        self.descriptor = descriptor
        inode = UInt(status.st_ino)
        wake = (pipeEnds[0], pipeEnds[1])
        let thread = Thread { [self] in
            serve(handler)
            let waiter = ended.withLock { state in
                state.done = true
                return state.waiter
            }
            waiter?.resume()
        }
        thread.name = "hostpin-control"
        thread.start()
    }

    /// Stops serving (a request being answered is finished first), closes the socket and removes its file.
    package func stop() async {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        await withCheckedContinuation { continuation in
            let done = ended.withLock { state in
                if !state.done { state.waiter = continuation }
                return state.done
            }
            if done { continuation.resume() }
        }
        close(descriptor)
        close(wake.read)
        close(wake.write)
        var status = stat()
        if stat(path, &status) == 0, UInt(status.st_ino) == inode { unlink(path) }
    }

    /// Removes a stale socket file at `path`; leaves anything else alone.
    private static func clear(_ path: String) throws(ControlSocketError) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        guard status.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path: path) }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(probe) }
        let connected = UnixSocketAddress.with(path) { connect(probe, $0, $1) }
        if connected == 0 { throw .inUse(path: path) }
        guard errno == ECONNREFUSED else { throw .system(path: path, call: "connect", reason: UnixSocketAddress.reason(errno)) }
        unlink(path)
    }

    /// The thread's loop: accept, answer, close, until woken.
    private func serve(_ handler: Handler) {
        while true {
            var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0, descriptors[1].revents == 0 else { return }
            let client = accept(descriptor, nil, nil)
            guard client >= 0 else {
                // Out of descriptors (or the like): the connection waits in the queue; try again shortly.
                if errno != EINTR && errno != ECONNABORTED { usleep(100_000) }
                continue
            }
            answer(client, handler)
            close(client)
        }
    }

    /// Reads one request line from `client`, and writes the reply line.
    private func answer(_ client: Int32, _ handler: Handler) {
        var timeout = timeval(tv_sec: Self.connectionTimeout, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // The request is read before the peer is judged, so a refused client gets its reply rather than
        // a connection closed under its write.
        guard let line = Self.readLine(client) else { return }
        let reply: JSONValue
        if let peer = PeerCredentials(of: client), peer.uid != geteuid() && peer.uid != 0 {
            reply = .object(["error": .string("user \(peer.uid) is neither the service's user (\(geteuid())) nor root")])
        } else {
            switch ControlRequest.parse(line) {
            case .success(let request): reply = handler(request)
            case .failure(let problem): reply = .object(["error": .string(problem.description)])
            }
        }
        let bytes = Array(reply.jsonData()) + [0x0A]
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            sent += count
        }
    }

    /// The bytes up to the first newline (without it), at most ``ControlRequest/lineLimit``; `nil` when
    /// the peer sent none in time.
    private static func readLine(_ client: Int32) -> [UInt8]? {
        var line: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while line.count <= ControlRequest.lineLimit {
            let count = recv(client, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return line.isEmpty ? nil : line }
            if let end = buffer[..<count].firstIndex(of: 0x0A) { return line + buffer[..<end] }
            line += buffer[..<count]
        }
        return nil
    }
}
