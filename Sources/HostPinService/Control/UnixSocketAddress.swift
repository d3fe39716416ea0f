import Foundation

/// A Unix socket address (`sockaddr_un`) for a path, for `bind(2)` and `connect(2)`: Foundation and
/// HostPinNet speak IP only.
package enum UnixSocketAddress {
    /// Calls `body` with the address of `path` (at most ``ControlSocketPath/maximumLength`` octets) and
    /// its length.
    package static func with<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8.prefix(ControlSocketPath.maximumLength))
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }

    /// The C library's sentence for `code`.
    package static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}
