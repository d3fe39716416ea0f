import CEpoll

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Who is at the other end of a connected Unix socket, as the kernel recorded it when the peer connected
/// (`SO_PEERCRED`, socket(7)): not something the peer says, so a server can refuse other users.
public struct PeerCredentials: Sendable, Hashable {
    /// The peer's process.
    public let pid: Int32
    /// Its effective user.
    public let uid: UInt32
    /// Its effective group.
    public let gid: UInt32

    /// The credentials of the peer of `descriptor`, a connected Unix socket; `nil` when the kernel gives
    /// none (not a Unix socket, not connected).
    public init?(of descriptor: Int32) {
        var credentials = hostpin_peer_credentials()
        var length = socklen_t(MemoryLayout<hostpin_peer_credentials>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
              Int(length) == MemoryLayout<hostpin_peer_credentials>.size else { return nil }
        pid = credentials.pid
        uid = credentials.uid
        gid = credentials.gid
    }
}
