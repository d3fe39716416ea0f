import HostPin
import HostPinService

/// Runs comparisons: both resolvers, made once for every name, the detector and the probes.
struct NameComparer: Sendable {
    /// The trusted resolver, or why it could not be set up (then every name reports that).
    let trusted: Result<TrustedResolver, ResolutionError>
    /// The local resolver, or why it could not be set up.
    let local: Result<UntrustedResolver, ResolutionError>
    /// The address records asked for, of both sides and in the wildcard probe.
    let family: AddressFamily
    /// The detector and which probes run.
    let options: HijackOptions
    /// `--ca-file`, for the HTTPS probe.
    let caFile: String?
    /// The longest one HTTPS handshake may take: the `--timeout` budget.
    let handshakeTimeout: Duration

    /// Asks both sides for `name` at once; when the local side gives addresses the trusted side did not,
    /// runs the probes asked for (all at once), then judges. The signature probe runs whenever the trusted
    /// answer is secure and the local one differs (other addresses, or NXDOMAIN/NODATA).
    func compare(_ name: HostName) async -> NameComparison {
        async let trustedOutcome = resolve(name, with: trusted)
        async let localOutcome = resolve(name, with: local)
        let (truth, claim) = await (trustedOutcome, localOutcome)
        guard let answer = TrustedAnswer(truth) else {
            return NameComparison(name: name, trusted: truth, local: claim, verdict: nil)
        }
        var extra: [IPAddress] = []
        var negative = false
        switch claim {
        case .success(let resolution): extra = HijackDetector.untrustedAddresses(resolution, trusted: answer)
        case .failure(.nxdomain), .failure(.nodata): negative = true
        case .failure: break
        }
        guard !extra.isEmpty else {
            let signatures = negative ? await signatureProbe(name, trusted: answer) : nil
            return NameComparison(name: name, trusted: truth, local: claim,
                                  verdict: options.detector.verdict(trusted: answer, local: claim, signatures: signatures))
        }
        async let wildcard = wildcardProbe(beside: name)
        async let certificates = certificateProbe(name, local: extra, trusted: answer.addresses)
        async let signatures = signatureProbe(name, trusted: answer)
        let verdict = options.detector.verdict(trusted: answer, local: claim, wildcard: await wildcard,
                                               certificates: await certificates, signatures: await signatures)
        return NameComparison(name: name, trusted: truth, local: claim, verdict: verdict)
    }

    /// The signature probe, when the trusted side validated `name` as secure (only then can a local
    /// answer's signatures be expected).
    private func signatureProbe(_ name: HostName, trusted answer: TrustedAnswer) async -> SignatureProbe? {
        guard case .addresses(let truth) = answer, truth.dnssec == .secure,
              case .success(let trusted) = trusted, case .success(let local) = local else { return nil }
        return await SignatureProbe.run(name, family: family, trusted: trusted, local: local)
    }

    private func wildcardProbe(beside name: HostName) async -> WildcardProbe? {
        guard options.probesWildcard, case .success(let trusted) = trusted, case .success(let local) = local else { return nil }
        return await WildcardProbe.run(beside: name, family: family, trusted: trusted, local: local)
    }

    private func certificateProbe(_ name: HostName, local: [IPAddress], trusted: [IPAddress]) async -> CertificateProbe? {
        guard let port = options.httpsPort, name.literalAddress == nil, !trusted.isEmpty else { return nil }
        return await CertificateProbe.run(name: name, port: port, local: local, trusted: trusted, caFile: caFile,
                                          timeout: handshakeTimeout)
    }

    private func resolve(_ name: HostName, with resolver: Result<some HostResolver, ResolutionError>) async
        -> Result<Resolution, ResolutionError>
    {
        do throws(ResolutionError) {
            return .success(try await resolver.get().resolve(name, family: family))
        } catch {
            return .failure(error)
        }
    }
}
