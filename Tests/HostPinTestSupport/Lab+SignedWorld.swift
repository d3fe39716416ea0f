import HostPin

extension Lab {
    /// The running lab's signed world: the NSD serving it (LAB_SIGNED_DNS) and its trust anchor
    /// (LAB_TRUST_ANCHOR, the file and the anchors read from it).
    public struct SignedWorld: Sendable {
        public let server: Upstream
        public let anchorPath: String
        public let anchors: TrustAnchors
    }

    /// The signed world; throws ``Problem/missing(_:)`` for a lab started before it existed, and the
    /// anchor file's ``TrustAnchorError``.
    public func signedWorld() throws -> SignedWorld {
        guard let server = signedDNS else { throw Problem.missing("LAB_SIGNED_DNS") }
        guard let anchorPath = trustAnchor else { throw Problem.missing("LAB_TRUST_ANCHOR") }
        return SignedWorld(server: server, anchorPath: anchorPath, anchors: try TrustAnchors.load(path: anchorPath))
    }
}
