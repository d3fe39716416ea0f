extension TrustedResolver {
    /// A validator for another server's replies (``SignatureProbe``): this resolver's trust anchors, the
    /// chain asked of its first upstream, and caches of its own — a bogus verdict on a forged local answer
    /// must never enter the bogus cache of the upstream the trusted resolution asks. `nil` with
    /// ``DNSSECMode/off``. A new one per probe: the chain's few queries are asked again each time, which a
    /// comparison (one probe per name that differs) affords.
    func probeValidator() -> UpstreamValidator? {
        guard configuration.dnssec.mode != .off, let transport = transports.first else { return nil }
        return UpstreamValidator(transport: transport, anchors: configuration.dnssec.trustAnchors, meter: nil,
                                 clock: SystemMonotonicClock(), keyCapacity: 64)
    }
}
