import CAres

/// A c-ares status code (`ARES_SUCCESS`, `ARES_ENOTFOUND`, …) and what it means for HostPin.
///
/// c-ares 1.18 `#define`s these; from 1.21 they are an enum while callbacks still pass `int`, so the
/// comparisons use the shim's integer constants and work on both.
struct AresStatus: Sendable, Hashable, CustomStringConvertible {
    /// The raw code a c-ares callback passed.
    let code: Int32

    /// How the status ends a query at one upstream.
    enum Meaning: Sendable, Hashable {
        case success
        /// The name does not exist (c-ares `ARES_ENOTFOUND` for an NXDOMAIN answer).
        case nxdomain
        /// The name exists without records of the type asked for (`ARES_ENODATA`).
        case nodata
        /// The upstream failed; the next upstream may do better.
        case upstreamFailure(UpstreamFailure.Reason)
        /// The query was cancelled or its channel destroyed.
        case cancelled
    }

    var meaning: Meaning {
        switch code {
        case HOSTPIN_ARES_SUCCESS: .success
        case HOSTPIN_ARES_ENOTFOUND: .nxdomain
        case HOSTPIN_ARES_ENODATA: .nodata
        case HOSTPIN_ARES_ESERVFAIL: .upstreamFailure(.servfail)
        // With ARES_FLAG_NOCHECKRESP (shim.h) an RCODE 5 answer is ARES_EREFUSED on 1.18 and 1.34; without it
        // 1.18 reports SERVFAIL and REFUSED both as ARES_ECONNREFUSED, which now means only that the
        // upstream's port refused the datagram or connection (ICMP port unreachable, TCP RST).
        case HOSTPIN_ARES_EREFUSED: .upstreamFailure(.refused)
        case HOSTPIN_ARES_ECONNREFUSED: .upstreamFailure(.unreachable)
        case HOSTPIN_ARES_ETIMEOUT: .upstreamFailure(.timeout)
        case HOSTPIN_ARES_EFORMERR, HOSTPIN_ARES_EBADRESP, HOSTPIN_ARES_EOF: .upstreamFailure(.badResponse)
        case HOSTPIN_ARES_ECANCELLED, HOSTPIN_ARES_EDESTRUCTION: .cancelled
        default: .upstreamFailure(.other(code: code, message: description))
        }
    }

    /// c-ares's own message for the code (`ares_strerror`).
    var description: String { String(cString: ares_strerror(code)) }
}
