/// One comparison: the local resolver's answer, the wildcard probe when it is evidence, the signature
/// probe when the trusted answer is secure and the local one differs, the verdict.
struct WatchComparer: Sendable {
    let local: any HostResolver
    let trusted: any HostResolver
    let detector: HijackDetector
    let probesWildcard: Bool

    /// The verdict on the local answer for `item`, and the local addresses; `nil` when the task was
    /// cancelled meanwhile (the watch stopped).
    func compare(_ item: WatchQueue.Item) async -> (HijackVerdict, [IPAddress])? {
        let claim: Result<Resolution, ResolutionError>
        do throws(ResolutionError) {
            claim = .success(try await local.resolve(item.name, family: item.family))
        } catch {
            claim = .failure(error)
        }
        guard !Task.isCancelled else { return nil }
        var extra: [IPAddress] = []
        var negative = false
        switch claim {
        case .success(let resolution): extra = HijackDetector.untrustedAddresses(resolution, trusted: item.trusted)
        case .failure(.nxdomain), .failure(.nodata): negative = true
        case .failure: break
        }
        var wildcard: WildcardProbe?
        if !extra.isEmpty, probesWildcard {
            wildcard = await WildcardProbe.run(beside: item.name, family: item.family, trusted: trusted, local: local)
            guard !Task.isCancelled else { return nil }
        }
        var signatures: SignatureProbe?
        if !extra.isEmpty || negative, case .addresses(let truth) = item.trusted, truth.dnssec == .secure,
           let (validating, untrusted) = signatureSides {
            signatures = await SignatureProbe.run(item.name, family: item.family, trusted: validating, local: untrusted)
            guard !Task.isCancelled else { return nil }
        }
        let addresses = (try? claim.get())?.ipAddresses ?? []
        return (detector.verdict(trusted: item.trusted, local: claim, wildcard: wildcard, signatures: signatures), addresses)
    }

    /// The signature probe's sides, when the watch's resolvers are HostPin's own: the local one an
    /// ``UntrustedResolver`` (it asks with DO and CD), the trusted one a ``TrustedResolver`` or a
    /// ``CachingResolver`` over one (its anchors and first upstream build the chain).
    private var signatureSides: (TrustedResolver, UntrustedResolver)? {
        guard let untrusted = local as? UntrustedResolver else { return nil }
        let validating = (trusted as? TrustedResolver) ?? ((trusted as? CachingResolver)?.upstream as? TrustedResolver)
        return validating.map { ($0, untrusted) }
    }
}
