import CAres

/// A c-ares status code (`ARES_SUCCESS`, `ARES_ETIMEOUT`, …) and what it means for HostPin.
///
/// c-ares 1.18 `#define`s these; from 1.21 they are an enum while callbacks still pass `int`, so the
/// comparisons use the shim's integer constants and work on both.
struct AresStatus: Sendable, Hashable, CustomStringConvertible {
    /// The raw code a c-ares callback passed.
    let code: Int32

    /// How the status ends an `ares_send` query at one upstream.
    enum Meaning: Sendable, Hashable {
        /// A reply arrived; what it says is for ``AddressAnswer`` to read. With ARES_FLAG_NOCHECKRESP
        /// (shim.h) SERVFAIL and REFUSED replies arrive this way too, at once, instead of being retried.
        case success
        /// No reply; the next upstream may do better.
        case upstreamFailure(UpstreamFailure.Reason)
        /// The query was cancelled or its channel destroyed.
        case cancelled
    }

    var meaning: Meaning {
        switch code {
        case HOSTPIN_ARES_SUCCESS: .success
        // The upstream's port refused the datagram or connection (ICMP port unreachable, TCP RST), or a
        // TCP connection closed before the reply.
        case HOSTPIN_ARES_ECONNREFUSED: .upstreamFailure(.unreachable)
        case HOSTPIN_ARES_ETIMEOUT: .upstreamFailure(.timeout)
        case HOSTPIN_ARES_EFORMERR, HOSTPIN_ARES_EBADRESP, HOSTPIN_ARES_EOF: .upstreamFailure(.badResponse)
        case HOSTPIN_ARES_ECANCELLED, HOSTPIN_ARES_EDESTRUCTION: .cancelled
        default: .upstreamFailure(.other(code: code, message: description))
        }
    }

    /// `ARES_ENOMEM`: also what HostPin reports when a query cannot be built, which only running out of
    /// memory can cause.
    static let outOfMemory = AresStatus(code: HOSTPIN_ARES_ENOMEM)

    /// c-ares's own message for the code (`ares_strerror`).
    var description: String { String(cString: ares_strerror(code)) }
}
