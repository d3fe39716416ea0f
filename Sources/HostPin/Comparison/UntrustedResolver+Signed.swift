extension UntrustedResolver {
    /// Asks the untrusted resolver for `name` with DO and CD set (RFC 4035 §3.2.1, §3.2.2), as the trusted
    /// side asks its upstreams when it validates: the answer, and for each reply that answered (addresses,
    /// NXDOMAIN, NODATA) its records for the validator (A first for `any`). For ``SignatureProbe``.
    ///
    /// - Returns: The answer (`nil` when the exchange was cancelled) and the signed replies.
    func askSigned(_ name: HostName, family: AddressFamily) async -> (AddressAnswer?, [SignedReply]) {
        await withCheckedContinuation { continuation in
            AddressLookup.ask(transport, for: name, family: family, deadline: nil, meter: nil, dnssec: true) { answer, signed in
                continuation.resume(returning: (answer, signed))
            }
        }
    }
}
