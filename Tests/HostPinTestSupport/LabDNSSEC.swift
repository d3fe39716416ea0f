import HostPin

/// The one rule for a test's DNSSEC setting now that validation is on by default (docs/ARCHITECTURE.md,
/// "Tests"): a test whose upstreams are the lab's servers (the NSDs, Unbound's DoH/DoT, the fault server
/// relaying to the NSD) validates from the lab's root anchor (`LAB_TRUST_ANCHOR`), as a user would with
/// the IANA root; a test whose upstream is a server of its own that cannot answer DS and DNSKEY
/// (``FaultServer``, an ``AuthoritativeServer`` with an unsigned zone, dnsmasq, a silent socket) turns
/// validation off, since every answer of such a server would be bogus under any anchor.
extension Lab {
    /// Validation from the lab root's anchor (`LAB_TRUST_ANCHOR`), `mode` validate unless told.
    ///
    /// - Throws: ``Problem/missing(_:)`` when the lab predates the signed world (no `LAB_TRUST_ANCHOR`), and the
    ///   ``TrustAnchorError`` of an anchor file that cannot be read.
    public func dnssec(_ mode: DNSSECMode = .validate, insecureDomains: [HostName] = []) throws -> DNSSECConfiguration {
        guard let trustAnchor else {
            throw Problem.missing("LAB_TRUST_ANCHOR")
        }
        return DNSSECConfiguration(mode: mode, trustAnchors: try TrustAnchors.load(path: trustAnchor),
                                   insecureDomains: insecureDomains)
    }
}

extension TrustedResolver.Configuration {
    /// A configuration for the lab's own servers `upstreams`, validating from the lab's anchor.
    ///
    /// - Throws: As ``Lab/dnssec(_:insecureDomains:)``.
    public static func lab(_ upstreams: [Upstream]) throws -> Self {
        var configuration = Self(upstreams: upstreams)
        configuration.dnssec = try Lab.current().dnssec()
        return configuration
    }

    /// A configuration for `upstreams` among which is a server of the test's own that cannot answer DS
    /// and DNSKEY queries: DNSSEC off (its answers would be bogus), the rest at the defaults.
    public static func ownServer(_ upstreams: [Upstream]) -> Self {
        var configuration = Self(upstreams: upstreams)
        configuration.dnssec = .off
        return configuration
    }
}
