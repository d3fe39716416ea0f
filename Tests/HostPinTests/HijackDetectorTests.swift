import Foundation
import HostPin
import Testing

/// ``HijackDetector``: the verdict and its reasons from outcomes built here, without a network. The
/// probes and the CLI are tested against real servers in `CompareReasonTests`.
@Suite struct HijackDetectorTests {
    private static let trustedServer = Upstream(address: IPAddress("127.0.0.1")!, port: 5300)
    private static let localServer = Upstream(address: IPAddress("127.0.0.2")!, port: 5300)
    /// Ordinary public addresses (not in any RFC 6890 block).
    private static let site = "93.184.216.34"
    private static let cdn = "93.184.216.35"
    private static let adServer = "45.33.32.156"

    private static func resolution(_ name: String, _ addresses: [String], untrusted: Bool) -> Resolution {
        Resolution(name: try! HostName.parse(name),
                   addresses: addresses.map { ResolvedAddress(address: IPAddress($0)!, ttl: 60) }, cnames: [],
                   upstream: untrusted ? localServer : trustedServer, source: untrusted ? .untrusted : .upstream,
                   receivedAt: Date())
    }

    private static func trusted(_ addresses: String..., name: String = "www.example.com") -> TrustedAnswer {
        .addresses(resolution(name, addresses, untrusted: false))
    }

    private static func local(_ addresses: String..., name: String = "www.example.com")
        -> Result<Resolution, ResolutionError>
    {
        .success(resolution(name, addresses, untrusted: true))
    }

    private static func probe(local: Result<Resolution, ResolutionError>, trusted: Result<Resolution, ResolutionError>)
        -> WildcardProbe
    {
        WildcardProbe(name: try! HostName.parse("hostpin-0123456789abcdef.example.com"), local: local, trusted: trusted)
    }

    private static func probeAnswer(_ addresses: String..., untrusted: Bool) -> Result<Resolution, ResolutionError> {
        .success(resolution("hostpin-0123456789abcdef.example.com", addresses, untrusted: untrusted))
    }

    private static func codes(_ verdict: HijackVerdict) -> [HijackReason.Code] { verdict.reasons.map(\.code) }

    // MARK: consistent

    @Test func everyLocalAddressTrustedIsConsistent() {
        let verdict = HijackDetector().verdict(trusted: Self.trusted(Self.site, Self.cdn), local: Self.local(Self.cdn))
        #expect(verdict == .consistent)
    }

    @Test(arguments: [
        (TrustedAnswer.nxdomain, ResolutionError.nxdomain(try! HostName.parse("nx.example.com"))),
        (.nodata, .nodata(try! HostName.parse("nx.example.com"), .any)),
        (.nxdomain, .nodata(try! HostName.parse("nx.example.com"), .any)),
    ])
    func noAddressOnEitherSideIsConsistent(trusted: TrustedAnswer, local: ResolutionError) {
        #expect(HijackDetector().verdict(trusted: trusted, local: .failure(local)) == .consistent)
    }

    // MARK: special-range

    @Test(arguments: [
        ("10.0.0.1", "10.0.0.0/8 (private use, RFC 1918)"),
        ("192.168.1.1", "192.168.0.0/16 (private use, RFC 1918)"),
        ("127.0.0.66", "127.0.0.0/8 (loopback, RFC 1122)"),
        ("169.254.1.1", "169.254.0.0/16 (link-local, RFC 3927)"),
        ("100.64.0.1", "100.64.0.0/10 (shared address space, RFC 6598)"),
        ("192.0.2.1", "192.0.2.0/24 (documentation (TEST-NET-1), RFC 5737)"),
        ("::1", "::1/128 (loopback, RFC 4291)"),
        ("fe80::1", "fe80::/10 (link-local, RFC 4291)"),
        ("fd00::1", "fc00::/7 (unique local, RFC 4193)"),
        ("2001:db8::1", "2001:db8::/32 (documentation, RFC 3849)"),
        ("::ffff:10.0.0.1", "10.0.0.0/8 (private use, RFC 1918)"),
    ])
    func specialPurposeLocalAddressIsHijacked(address: String, block: String) {
        let verdict = HijackDetector().verdict(trusted: Self.trusted(Self.site), local: Self.local(address))
        #expect(verdict == .hijacked([HijackReason(.specialRange, "the local answer points into special-purpose blocks "
            + "(RFC 6890), the trusted one does not: \(address) in \(block)")]))
    }

    @Test func specialPurposeLocalAddressWhileATrustedOneIsSpecialTooIsDisjoint() {
        let verdict = HijackDetector().verdict(trusted: Self.trusted("10.1.2.3"), local: Self.local("10.0.0.1"))
        #expect(Self.codes(verdict) == [.disjoint])
        guard case .inconclusive = verdict else { Issue.record("\(verdict)"); return }
    }

    @Test func ordinaryRangesAreNotSpecial() {
        let detector = HijackDetector(ordinary: [IPAddressRange("10.0.0.0/8")!, IPAddressRange("::1")!])
        #expect(Self.codes(detector.verdict(trusted: Self.trusted(Self.site), local: Self.local("10.0.0.1"))) == [.disjoint])
        #expect(Self.codes(detector.verdict(trusted: Self.trusted(Self.site), local: Self.local("::1"))) == [.disjoint])
        // Only what the ranges hold: 10.0.0.0/8 does not make 192.168.0.0/16 ordinary.
        #expect(Self.codes(detector.verdict(trusted: Self.trusted(Self.site), local: Self.local("192.168.1.1")))
                    == [.specialRange])
        #expect(detector.specialPurposeBlock(of: IPAddress("10.9.9.9")!) == nil)
        #expect(detector.specialPurposeBlock(of: IPAddress("127.0.0.1")!)?.prefix == "127.0.0.0/8")
    }

    /// Reserved test and local TLDs are judged as public names are: no exception for their addresses.
    @Test(arguments: ["printer.local", "db.internal", "www.example.test", "www.example.com"])
    func reservedTopLevelDomainsAreJudgedAsPublicOnes(name: String) {
        let verdict = HijackDetector().verdict(trusted: Self.trusted(Self.site, name: name),
                                               local: Self.local("192.168.1.5", name: name))
        #expect(Self.codes(verdict) == [.specialRange])
    }

    // MARK: nxdomain-rewrite

    @Test func answerForANonexistentNameIsANXDOMAINRewrite() {
        let verdict = HijackDetector().verdict(trusted: .nxdomain, local: Self.local(Self.adServer, name: "nx.example.com"))
        #expect(verdict == .hijacked([HijackReason(.nxdomainRewrite, "the trusted side says nx.example.com does not exist "
            + "(NXDOMAIN), the local resolver answers it with \(Self.adServer): NXDOMAIN rewritten (typically to an ad "
            + "or search page)")]))
    }

    @Test func privateAnswerForANonexistentNameGivesBothReasons() {
        let verdict = HijackDetector().verdict(trusted: .nxdomain, local: Self.local("10.0.0.1", name: "nx.example.com"))
        #expect(Self.codes(verdict) == [.specialRange, .nxdomainRewrite])
    }

    @Test func answerWhereTheTrustedSideHasNoDataIsDisjointNotARewrite() {
        let verdict = HijackDetector().verdict(trusted: .nodata, local: Self.local(Self.adServer))
        #expect(verdict == .inconclusive([HijackReason(.disjoint, "\(Self.adServer) is not among the trusted addresses "
            + "(the trusted side gives none), and nothing marks it as a hijack: CDNs and load balancers answer "
            + "differently by place and time")]))
    }

    // MARK: wildcard

    @Test func localAnswerForTheRandomNameWithTheSameAddressIsAWildcard() {
        let probe = Self.probe(local: Self.probeAnswer(Self.adServer, untrusted: true),
                               trusted: .failure(.nxdomain(try! HostName.parse("hostpin-0123456789abcdef.example.com"))))
        let verdict = HijackDetector().verdict(trusted: Self.trusted(Self.site), local: Self.local(Self.adServer),
                                               wildcard: probe)
        #expect(verdict == .hijacked([HijackReason(.wildcard, "the local resolver answers "
            + "hostpin-0123456789abcdef.example.com, a random name that does not exist (trusted side: NXDOMAIN), with "
            + "\(Self.adServer) too: it answers names that do not exist")]))
    }

    @Test func trustedNODATAForTheRandomNameAlsoConfirmsAWildcard() {
        let probe = Self.probe(local: Self.probeAnswer(Self.adServer, untrusted: true),
                               trusted: .failure(.nodata(try! HostName.parse("hostpin-0123456789abcdef.example.com"), .any)))
        let verdict = HijackDetector().verdict(trusted: Self.trusted(Self.site), local: Self.local(Self.adServer),
                                               wildcard: probe)
        #expect(Self.codes(verdict) == [.wildcard])
        #expect(verdict.reasons.first?.detail.contains("(trusted side: NODATA)") == true)
    }

    @Test(arguments: [
        // The zone has a wildcard record: the trusted side answers the random name too.
        ("trusted wildcard", WildcardProbe(name: try! HostName.parse("hostpin-0123456789abcdef.example.com"),
                                           local: HijackDetectorTests.probeAnswer(HijackDetectorTests.adServer, untrusted: true),
                                           trusted: HijackDetectorTests.probeAnswer(HijackDetectorTests.site, untrusted: false))),
        // The trusted side failed: nothing confirms that the name does not exist.
        ("trusted failed", WildcardProbe(name: try! HostName.parse("hostpin-0123456789abcdef.example.com"),
                                         local: HijackDetectorTests.probeAnswer(HijackDetectorTests.adServer, untrusted: true),
                                         trusted: .failure(.upstreamsFailed([UpstreamFailure(upstream: HijackDetectorTests.trustedServer, reason: .timeout)])))),
        // The local resolver redirects nonexistent names elsewhere: the name's own answer is not that redirect.
        ("other address", WildcardProbe(name: try! HostName.parse("hostpin-0123456789abcdef.example.com"),
                                        local: HijackDetectorTests.probeAnswer("45.33.32.157", untrusted: true),
                                        trusted: .failure(.nxdomain(try! HostName.parse("hostpin-0123456789abcdef.example.com"))))),
        ("local NXDOMAIN", WildcardProbe(name: try! HostName.parse("hostpin-0123456789abcdef.example.com"),
                                         local: .failure(.nxdomain(try! HostName.parse("hostpin-0123456789abcdef.example.com"))),
                                         trusted: .failure(.nxdomain(try! HostName.parse("hostpin-0123456789abcdef.example.com"))))),
    ])
    func probeThatProvesNoRedirectGivesNoWildcardReason(_ label: String, probe: WildcardProbe) {
        let verdict = HijackDetector().verdict(trusted: Self.trusted(Self.site), local: Self.local(Self.adServer),
                                               wildcard: probe)
        #expect(Self.codes(verdict) == [.disjoint], "\(label)")
    }

    // MARK: known-hijack-address

    @Test func addressOnTheKnownListIsHijacked() throws {
        let list = try HijackList(parsing: Array("45.33.32.0/24   # an ISP's search page\n".utf8), source: "list")
        let verdict = HijackDetector(knownHijackAddresses: list).verdict(trusted: Self.trusted(Self.site),
                                                                         local: Self.local(Self.adServer))
        #expect(verdict == .hijacked([HijackReason(.knownHijackAddress, "on the known hijack list: \(Self.adServer) "
            + "matches 45.33.32.0/24 (line 1: an ISP's search page)")]))
    }

    @Test func listedAddressTheTrustedSideGivesTooIsNoEvidence() throws {
        let list = try HijackList(parsing: Array("\(Self.site) # shared hosting\n".utf8), source: "list")
        let verdict = HijackDetector(knownHijackAddresses: list).verdict(trusted: Self.trusted(Self.site),
                                                                         local: Self.local(Self.site))
        #expect(verdict == .consistent)
    }

    // MARK: bad-certificate

    private static func certificates(local: CertificateProbe.Outcome, trusted: CertificateProbe.Outcome) -> CertificateProbe {
        CertificateProbe(port: 443, local: [.init(address: IPAddress(adServer)!, outcome: local)],
                         trusted: [.init(address: IPAddress(site)!, outcome: trusted)])
    }

    @Test func localCertificateForAnotherNameWhileTheTrustedOneIsValidIsHijacked() {
        let probe = Self.certificates(local: .invalid(.certificateNameMismatch("no alternative name matches")),
                                      trusted: .valid)
        let verdict = HijackDetector().verdict(trusted: Self.trusted(Self.site), local: Self.local(Self.adServer),
                                               certificates: probe)
        #expect(verdict == .hijacked([HijackReason(.badCertificate, "on port 443, the trusted \(Self.site) serves a "
            + "certificate valid for www.example.com; \(Self.adServer) serves one for another name (no alternative name "
            + "matches)")]))
    }

    @Test(arguments: [
        // The site has no valid certificate either: nothing to tell them apart by.
        (CertificateProbe.Outcome.invalid(.untrustedCertificate("unknown issuer")), CertificateProbe.Outcome.invalid(.untrustedCertificate("unknown issuer"))),
        // No TLS at the local address: no certificate to judge.
        (.failed(.connectFailed("Connection refused")), .valid),
        (.valid, .valid),
    ])
    func certificateProbeWithoutContrastGivesNoReason(local: CertificateProbe.Outcome, trusted: CertificateProbe.Outcome) {
        let verdict = HijackDetector().verdict(trusted: Self.trusted(Self.site), local: Self.local(Self.adServer),
                                               certificates: Self.certificates(local: local, trusted: trusted))
        #expect(Self.codes(verdict) == [.disjoint])
    }

    // MARK: inconclusive

    @Test func differentPublicAddressesAreDisjoint() {
        let verdict = HijackDetector().verdict(trusted: Self.trusted(Self.site), local: Self.local(Self.cdn, Self.site))
        #expect(verdict == .inconclusive([HijackReason(.disjoint, "\(Self.cdn) is not among the trusted addresses "
            + "(\(Self.site)), and nothing marks it as a hijack: CDNs and load balancers answer differently by place "
            + "and time")]))
    }

    @Test(arguments: [
        (ResolutionError.nxdomain(try! HostName.parse("www.example.com")), "does not exist (NXDOMAIN)"),
        (.nodata(try! HostName.parse("www.example.com"), .v4), "has no address of the family (NODATA)"),
    ])
    func localNegativeAnswerForAResolvingNameIsBlocked(error: ResolutionError, says: String) {
        let verdict = HijackDetector().verdict(trusted: Self.trusted(Self.site), local: .failure(error))
        #expect(verdict == .inconclusive([HijackReason(.blocked, "the local resolver says www.example.com \(says), the "
            + "trusted side resolves it to \(Self.site): a filter blocks the name, or its records just changed")]))
    }

    @Test func localFailureIsInconclusive() {
        let failure = ResolutionError.upstreamsFailed([UpstreamFailure(upstream: Self.localServer, reason: .servfail)])
        let verdict = HijackDetector().verdict(trusted: Self.trusted(Self.site), local: .failure(failure))
        #expect(verdict == .inconclusive([HijackReason(.localFailed,
                                                       "the local resolver gave no answer (127.0.0.2:5300: SERVFAIL): nothing to compare")]))
        #expect(HijackDetector().verdict(trusted: .nxdomain, local: .failure(failure)).reasons.map(\.code) == [.localFailed])
    }

    // MARK: several reasons

    @Test func everyReasonAtOnceIsListedInCodeOrder() throws {
        let list = try HijackList(parsing: Array("10.0.0.1 # a portal\n".utf8), source: "list")
        let probe = Self.probe(local: .success(Self.resolution("hostpin-0123456789abcdef.example.com", ["10.0.0.1"], untrusted: true)),
                               trusted: .failure(.nxdomain(try! HostName.parse("hostpin-0123456789abcdef.example.com"))))
        let certificates = CertificateProbe(port: 443, local: [.init(address: IPAddress("10.0.0.1")!, outcome: .invalid(.certificateNameMismatch("x")))],
                                            trusted: [])
        let verdict = HijackDetector(knownHijackAddresses: list).verdict(trusted: .nxdomain,
                                                                         local: Self.local("10.0.0.1", name: "nx.example.com"),
                                                                         wildcard: probe, certificates: certificates)
        // No trusted address serves a valid certificate (there is none): no bad-certificate.
        #expect(Self.codes(verdict) == [.specialRange, .nxdomainRewrite, .wildcard, .knownHijackAddress])
        #expect(verdict.description == "hijacked")
    }

    @Test func hijackCodesAreTheSixEvidenceCodes() {
        #expect(HijackReason.Code.allCases.filter(\.isHijack)
                    == [.specialRange, .nxdomainRewrite, .wildcard, .knownHijackAddress, .badCertificate, .badSignature])
        #expect(HijackReason.Code.allCases.map(\.rawValue) == ["special-range", "nxdomain-rewrite", "wildcard",
                                                               "known-hijack-address", "bad-certificate",
                                                               "bad-signature", "disjoint", "blocked", "local-failed",
                                                               "no-signatures"])
    }

    // MARK: bad-signature, no-signatures (the signature probe)

    private static func secure(_ addresses: String..., name: String = "www.example.com") -> TrustedAnswer {
        let plain = resolution(name, addresses, untrusted: false)
        return .addresses(Resolution(name: plain.name, addresses: plain.addresses, cnames: [], upstream: plain.upstream,
                                     source: plain.source, receivedAt: plain.receivedAt, dnssec: .secure))
    }

    private static func signatures(_ finding: SignatureProbe.Finding, name: String = "www.example.com") -> SignatureProbe {
        SignatureProbe(name: try! HostName.parse(name), finding: finding)
    }

    private static let forged = BogusReason(rrset: "www.example.com. A", keyTag: 4242,
                                            problem: .signatureInvalid("crypto"))

    @Test func failingSignaturesForASecureNameAreHijacked() {
        let verdict = HijackDetector().verdict(trusted: Self.secure(Self.site), local: Self.local(Self.adServer),
                                               signatures: Self.signatures(.badSignatures(Self.forged)))
        #expect(Self.codes(verdict) == [.badSignature])
        #expect(verdict.description == "hijacked")
        #expect(verdict.reasons.first?.detail.contains("45.33.32.156") == true)
        #expect(verdict.reasons.first?.detail.contains("does not verify") == true)
    }

    @Test func failingSignaturesOnALocalDenialOfASecureNameAreHijacked() {
        let name = try! HostName.parse("www.example.com")
        let verdict = HijackDetector().verdict(trusted: Self.secure(Self.site), local: .failure(.nxdomain(name)),
                                               signatures: Self.signatures(.badSignatures(Self.forged)))
        #expect(Self.codes(verdict) == [.badSignature])
        #expect(verdict.description == "hijacked")
    }

    @Test func noSignaturesForASecureNameIsOnlyInconclusive() {
        let verdict = HijackDetector().verdict(trusted: Self.secure(Self.site), local: Self.local(Self.adServer),
                                               signatures: Self.signatures(.unsigned))
        #expect(Self.codes(verdict) == [.disjoint, .noSignatures])
        #expect(verdict.description == "inconclusive")
        let name = try! HostName.parse("www.example.com")
        let blocked = HijackDetector().verdict(trusted: Self.secure(Self.site), local: .failure(.nodata(name, .any)),
                                               signatures: Self.signatures(.unsigned))
        #expect(Self.codes(blocked) == [.blocked, .noSignatures])
    }

    @Test func signaturesCountOnlyWhenTheTrustedAnswerIsSecure() {
        // Not validated (or insecure) on the trusted side: no zone known signed, the probe is no evidence.
        let verdict = HijackDetector().verdict(trusted: Self.trusted(Self.site), local: Self.local(Self.adServer),
                                               signatures: Self.signatures(.badSignatures(Self.forged)))
        #expect(Self.codes(verdict) == [.disjoint])
        let unsigned = HijackDetector().verdict(trusted: Self.trusted(Self.site), local: Self.local(Self.adServer),
                                                signatures: Self.signatures(.unsigned))
        #expect(Self.codes(unsigned) == [.disjoint])
    }

    @Test(arguments: [SignatureProbe.Finding.valid(.secure), .valid(.insecure), .unchecked("no reply")])
    func otherFindingsAddNothing(finding: SignatureProbe.Finding) {
        let verdict = HijackDetector().verdict(trusted: Self.secure(Self.site), local: Self.local(Self.adServer),
                                               signatures: Self.signatures(finding))
        #expect(Self.codes(verdict) == [.disjoint])
    }

    @Test func badSignaturesJoinOtherEvidenceInCodeOrder() {
        let verdict = HijackDetector().verdict(trusted: Self.secure(Self.site), local: Self.local("10.0.0.1"),
                                               signatures: Self.signatures(.badSignatures(Self.forged)))
        #expect(Self.codes(verdict) == [.specialRange, .badSignature])
    }

    // MARK: answers without a trusted one (the untrusted fallback)

    @Test func unverifiedAnswerIsRefusedForSpecialOrListedAddresses() throws {
        let list = try HijackList(parsing: Array("45.33.32.156 # an ISP's search page\n".utf8), source: "list")
        let detector = HijackDetector(ordinary: [IPAddressRange("10.0.0.0/8")!], knownHijackAddresses: list)
        #expect(detector.hijackReasons(unverified: Self.resolution("www.example.com", [Self.site], untrusted: true)) == [])
        #expect(detector.hijackReasons(unverified: Self.resolution("www.example.com", ["10.0.0.1"], untrusted: true)) == [])
        #expect(detector.hijackReasons(unverified: Self.resolution("www.example.com", [Self.site, "127.0.0.1"], untrusted: true))
                    == [HijackReason(.specialRange, "the answer points into special-purpose blocks (RFC 6890), and no "
                        + "trusted answer vouches for it: 127.0.0.1 in 127.0.0.0/8 (loopback, RFC 1122)")])
        #expect(detector.hijackReasons(unverified: Self.resolution("www.example.com", [Self.adServer], untrusted: true))
                    == [HijackReason(.knownHijackAddress, "on the known hijack list: \(Self.adServer) matches "
                        + "\(Self.adServer) (line 1: an ISP's search page)")])
    }

    // MARK: inputs

    @Test func untrustedAddressesAreTheLocalOnesNotTrustedWithoutRepeats() {
        let local = Self.resolution("www.example.com", [Self.cdn, Self.site, Self.adServer, Self.cdn], untrusted: true)
        #expect(HijackDetector.untrustedAddresses(local, trusted: Self.trusted(Self.site)).map(\.description)
                    == [Self.cdn, Self.adServer])
        #expect(HijackDetector.untrustedAddresses(local, trusted: .nxdomain).map(\.description)
                    == [Self.cdn, Self.site, Self.adServer])
    }

    @Test func trustedAnswerIsNilForAFailure() {
        #expect(TrustedAnswer(.failure(.nxdomain(try! HostName.parse("nx.example.com")))) == .nxdomain)
        #expect(TrustedAnswer(.failure(.nodata(try! HostName.parse("nx.example.com"), .v6))) == .nodata)
        #expect(TrustedAnswer(.failure(.timeout(budget: .seconds(5), []))) == nil)
        #expect(TrustedAnswer(.failure(.upstreamsFailed([]))) == nil)
        #expect(TrustedAnswer(.failure(.cancelled)) == nil)
    }

    @Test func randomNameReplacesTheFirstLabel() throws {
        let name = try HostName.parse("www.example.test")
        let first = try #require(WildcardProbe.randomName(beside: name))
        let second = try #require(WildcardProbe.randomName(beside: name))
        #expect(first.text.wholeMatch(of: /hostpin-[a-z0-9]{16}\.example\.test/) != nil, "\(first)")
        #expect(first != second)
        #expect(WildcardProbe.randomName(beside: try HostName.parse("intranet"))?.text.wholeMatch(of: /hostpin-[a-z0-9]{16}/) != nil)
        #expect(WildcardProbe.randomName(beside: try HostName.parse("127.0.0.1")) == nil)
        #expect(WildcardProbe.randomName(beside: try HostName.parse("localhost")) == nil)
        // 250 octets: the parent (248) has no room for a 24-octet label.
        let labels = [61, 61, 61, 60].map { String(repeating: "b", count: $0) }
        let long = try HostName.parse("a." + labels.joined(separator: ".") + ".test")
        #expect(long.text.utf8.count == 253)
        #expect(WildcardProbe.randomName(beside: long) == nil)
    }
}
