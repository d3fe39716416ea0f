import HostPinNet

// The socket layer's public types, named here too so `import HostPinProxy` is enough to configure and
// embed the proxy (its API takes and reports them).

/// A TCP endpoint: `127.0.0.1:8118` or `[::1]:8118` (see `HostPinNet.SocketAddress`).
public typealias SocketAddress = HostPinNet.SocketAddress
/// Why a socket operation failed (see `HostPinNet.SocketError`).
public typealias SocketError = HostPinNet.SocketError
/// Why the proxy could not start listening (see `HostPinNet.ListenError`).
public typealias ListenError = HostPinNet.ListenError
