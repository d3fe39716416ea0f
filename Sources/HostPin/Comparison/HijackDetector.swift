/// Judges a local (untrusted) resolver's answer against the trusted one and says why: a
/// ``HijackVerdict`` with ``HijackReason``s.
///
/// Pure: it sends nothing. Its inputs are what the caller collected — the trusted answer, the local
/// outcome and, when it ran them, the ``WildcardProbe``, the ``CertificateProbe`` and the
/// ``SignatureProbe`` — and its settings: the ranges that count as ordinary despite RFC 6890, and the
/// known hijack addresses.
///
/// Only local addresses the trusted side did not give are evidence. Among those:
/// - `special-range`: any in a special-purpose block (``specialPurposeBlock(of:)``) while no trusted
///   address is;
/// - `nxdomain-rewrite`: any at all, when the trusted side says the name does not exist;
/// - `wildcard`: one the local resolver also gives for the probe's random name, which the trusted side
///   says does not exist (or has no address; a trusted answer there is a real wildcard record);
/// - `known-hijack-address`: one on the list;
/// - `bad-certificate`: one serving a certificate not valid for the name, while a trusted address
///   serves a valid one;
/// - `bad-signature`: the local answer carries RRSIGs that fail (``SignatureProbe/Finding/badSignatures(_:)``)
///   while the trusted answer is secure — the zone is signed, and the answer was changed after signing.
///   This one also judges a local NXDOMAIN or NODATA whose denial fails so.
///
/// Any of these makes the verdict `hijacked`. Without one, different addresses are `inconclusive`
/// (`disjoint`: CDNs and load balancers answer differently by place and time), as are a local NXDOMAIN
/// or NODATA for a name the trusted side resolves (`blocked`) and a local failure (`local-failed`). A
/// local answer without any RRSIG for a secure name adds `no-signatures` to an inconclusive verdict and
/// nothing more: local resolvers often strip signatures from honest answers.
/// Every local address trusted, or no address on either side, is `consistent`.
///
/// A name's TLD changes nothing: a name under `.test`, `.internal` or `.local` is judged as a public
/// name is, so a special-purpose address counts for it too unless its range is declared ordinary.
public struct HijackDetector: Sendable, Hashable {
    /// Ranges whose addresses count as ordinary even inside an RFC 6890 block: a test lab on loopback,
    /// a company's private address plan served by its own DNS.
    public var ordinary: [IPAddressRange]
    /// Addresses known to be handed out by hijacking resolvers.
    public var knownHijackAddresses: HijackList

    /// A detector with these settings; by default every RFC 6890 block is special and no address is
    /// known.
    public init(ordinary: [IPAddressRange] = [], knownHijackAddresses: HijackList = HijackList()) {
        self.ordinary = ordinary
        self.knownHijackAddresses = knownHijackAddresses
    }

    /// The special-purpose block `address` is in, unless an ``ordinary`` range holds it.
    public func specialPurposeBlock(of address: IPAddress) -> IPAddress.SpecialPurposeBlock? {
        ordinary.contains { $0.contains(address) } ? nil : address.specialPurposeBlock
    }

    /// The local addresses the trusted side did not give, in answer order without repeats: the only
    /// ones the probes need to look at (none: nothing to probe).
    public static func untrustedAddresses(_ local: Resolution, trusted: TrustedAnswer) -> [IPAddress] {
        var seen = Set(trusted.addresses)
        return local.ipAddresses.filter { seen.insert($0).inserted }
    }

    /// The verdict on `local` against `trusted` (see the type's documentation for the rules).
    ///
    /// - Parameters:
    ///   - trusted: What the trusted side said.
    ///   - local: The local resolver's outcome for the same name and family.
    ///   - wildcard: The wildcard probe, when it ran.
    ///   - certificates: The HTTPS probe, when it ran.
    ///   - signatures: The signature probe, when it ran.
    public func verdict(trusted: TrustedAnswer, local: Result<Resolution, ResolutionError>,
                        wildcard: WildcardProbe? = nil, certificates: CertificateProbe? = nil,
                        signatures: SignatureProbe? = nil) -> HijackVerdict {
        let claim: Resolution
        switch local {
        case .success(let resolution):
            claim = resolution
        case .failure(let error):
            if case .addresses(let truth) = trusted, let negative = Self.negative(error) {
                if let reason = Self.badSignature(signatures, trusted: trusted, what: "denial (\(negative))") {
                    return .hijacked([reason])
                }
                return .inconclusive([HijackReason(.blocked, "the local resolver says \(truth.name) \(negative), the "
                    + "trusted side resolves it to \(Self.list(truth.ipAddresses)): a filter blocks the name, or its "
                    + "records just changed")] + Self.noSignatures(signatures, trusted: trusted))
            }
            if Self.negative(error) != nil { return .consistent }
            return .inconclusive([HijackReason(.localFailed, "the local resolver gave no answer (\(Self.failure(error))): "
                + "nothing to compare")])
        }
        let extra = Self.untrustedAddresses(claim, trusted: trusted)
        if extra.isEmpty { return .consistent }
        var reasons: [HijackReason] = []
        if let reason = specialRange(extra, trusted: trusted) { reasons.append(reason) }
        if case .nxdomain = trusted {
            reasons.append(HijackReason(.nxdomainRewrite, "the trusted side says \(claim.name) does not exist (NXDOMAIN), "
                + "the local resolver answers it with \(Self.list(extra)): NXDOMAIN rewritten (typically to an ad or "
                + "search page)"))
        }
        if let wildcard, let reason = Self.wildcard(extra, probe: wildcard) { reasons.append(reason) }
        if let reason = knownHijack(extra) { reasons.append(reason) }
        if let certificates, let reason = Self.badCertificate(extra, name: claim.name, probe: certificates) {
            reasons.append(reason)
        }
        if let reason = Self.badSignature(signatures, trusted: trusted, what: "answer (\(Self.list(extra)))") {
            reasons.append(reason)
        }
        if !reasons.isEmpty { return .hijacked(reasons) }
        let trustedText = trusted.addresses.isEmpty ? "the trusted side gives none" : Self.list(trusted.addresses)
        return .inconclusive([HijackReason(.disjoint, "\(Self.list(extra)) \(extra.count == 1 ? "is" : "are") not among "
            + "the trusted addresses (\(trustedText)), and nothing marks \(extra.count == 1 ? "it" : "them") as a "
            + "hijack: CDNs and load balancers answer differently by place and time")]
            + Self.noSignatures(signatures, trusted: trusted))
    }

    /// The trusted answer's name when it is secure: the zone is signed, so a local answer must be too.
    private static func signedName(_ trusted: TrustedAnswer) -> HostName? {
        guard case .addresses(let truth) = trusted, truth.dnssec == .secure else { return nil }
        return truth.name
    }

    /// `bad-signature` when the probe found the local `what`'s RRSIGs failing for a secure name.
    private static func badSignature(_ probe: SignatureProbe?, trusted: TrustedAnswer, what: String) -> HijackReason? {
        guard let probe, case .badSignatures(let reason) = probe.finding, let name = signedName(trusted) else { return nil }
        return HijackReason(.badSignature, "the local \(what) for \(name) carries signatures that fail (\(reason)), "
            + "and the trusted side validated the name as secure: the answer was changed after the zone signed it")
    }

    /// `no-signatures` (for an inconclusive verdict) when the probe found no RRSIG for a secure name.
    private static func noSignatures(_ probe: SignatureProbe?, trusted: TrustedAnswer) -> [HijackReason] {
        guard let probe, probe.finding == .unsigned, let name = signedName(trusted) else { return [] }
        return [HijackReason(.noSignatures, "the local answer for \(name) carries no RRSIG, though the trusted side "
            + "validated the name as secure: nothing proves it forged, as local resolvers often strip signatures")]
    }

    /// The hijack reasons against an answer that no trusted answer vouches for (the opted-in untrusted
    /// fallback's): any address on the known list, any special-purpose address. Empty: nothing speaks
    /// against it.
    public func hijackReasons(unverified answer: Resolution) -> [HijackReason] {
        var reasons: [HijackReason] = []
        let special = answer.ipAddresses.compactMap { address in specialPurposeBlock(of: address).map { (address, $0) } }
        if !special.isEmpty {
            reasons.append(HijackReason(.specialRange, "the answer points into special-purpose blocks (RFC 6890), and "
                + "no trusted answer vouches for it: " + Self.blockList(special)))
        }
        if let reason = knownHijack(answer.ipAddresses) { reasons.append(reason) }
        return reasons
    }

    private func specialRange(_ extra: [IPAddress], trusted: TrustedAnswer) -> HijackReason? {
        guard !trusted.addresses.contains(where: { specialPurposeBlock(of: $0) != nil }) else { return nil }
        let special = extra.compactMap { address in specialPurposeBlock(of: address).map { (address, $0) } }
        guard !special.isEmpty else { return nil }
        return HijackReason(.specialRange, "the local answer points into special-purpose blocks (RFC 6890), the "
            + "trusted one does not: " + Self.blockList(special))
    }

    private func knownHijack(_ addresses: [IPAddress]) -> HijackReason? {
        let listed = addresses.compactMap { address in knownHijackAddresses.entry(containing: address).map { (address, $0) } }
        guard !listed.isEmpty else { return nil }
        return HijackReason(.knownHijackAddress, "on the known hijack list: "
            + listed.map { address, entry in "\(address) matches \(entry)" }.joined(separator: ", "))
    }

    private static func wildcard(_ extra: [IPAddress], probe: WildcardProbe) -> HijackReason? {
        guard case .success(let answer) = probe.local else { return nil }
        let trustedSays: String
        switch probe.trusted {
        case .failure(.nxdomain): trustedSays = "NXDOMAIN"
        case .failure(.nodata): trustedSays = "NODATA"
        // A trusted answer is a wildcard record in the zone (RFC 4592); a trusted failure confirms nothing.
        case .success, .failure: return nil
        }
        let redirected = Set(answer.ipAddresses)
        let shared = extra.filter(redirected.contains)
        guard !shared.isEmpty else { return nil }
        return HijackReason(.wildcard, "the local resolver answers \(probe.name), a random name that does not exist "
            + "(trusted side: \(trustedSays)), with \(list(shared)) too: it answers names that do not exist")
    }

    private static func badCertificate(_ extra: [IPAddress], name: HostName, probe: CertificateProbe) -> HijackReason? {
        guard let valid = probe.trusted.first(where: { $0.outcome == .valid }) else { return nil }
        let bad = probe.local.compactMap { check -> String? in
            guard extra.contains(check.address), case .invalid(let failure) = check.outcome else { return nil }
            return "\(check.address) serves \(certificateProblem(failure))"
        }
        guard !bad.isEmpty else { return nil }
        return HijackReason(.badCertificate, "on port \(probe.port), the trusted \(valid.address) serves a certificate "
            + "valid for \(name); " + bad.joined(separator: "; "))
    }

    /// What is wrong with a certificate, from the handshake's failure.
    private static func certificateProblem(_ failure: EncryptedTransportFailure) -> String {
        switch failure {
        case .certificateNameMismatch(let message): "one for another name (\(message))"
        case .untrustedCertificate(let message): "one no trusted CA vouches for (\(message))"
        default: "no valid one (\(failure))"
        }
    }

    /// `does not exist (NXDOMAIN)` or `has no address (NODATA)` for a negative answer; `nil` otherwise.
    private static func negative(_ error: ResolutionError) -> String? {
        switch error {
        case .nxdomain: "does not exist (NXDOMAIN)"
        case .nodata: "has no address of the family (NODATA)"
        case .badName, .noUpstreams, .upstreamsFailed, .timeout, .cancelled, .setupFailed, .dnssecBogus: nil
        }
    }

    /// Why the local resolver failed, without the trusted side's wording.
    private static func failure(_ error: ResolutionError) -> String {
        switch error {
        case .upstreamsFailed(let failures): failures.map(\.description).joined(separator: "; ")
        case .timeout(let budget, _): "no answer within \(budget.formattedSeconds)"
        case .nxdomain, .nodata, .badName, .noUpstreams, .cancelled, .setupFailed, .dnssecBogus: error.description
        }
    }

    private static func list(_ addresses: [IPAddress]) -> String {
        addresses.map(\.description).joined(separator: ", ")
    }

    private static func blockList(_ special: [(IPAddress, IPAddress.SpecialPurposeBlock)]) -> String {
        special.map { address, block in "\(address) in \(block)" }.joined(separator: ", ")
    }
}
