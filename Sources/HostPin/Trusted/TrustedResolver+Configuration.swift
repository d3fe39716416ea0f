extension TrustedResolver {
    /// How a ``TrustedResolver`` queries its upstreams.
    public struct Configuration: Sendable, Hashable {
        /// The trusted upstreams, in preference order, plain and encrypted mixed as wanted. Never read from
        /// the system configuration.
        public var upstreams: [Upstream]
        /// c-ares's first per-try timeout at one plain upstream; it doubles on each retry
        /// (1 s with 2 tries gives up after about 3 s). An encrypted upstream's exchange is one attempt
        /// given that whole time, `timeout × (2^tries − 1)`, connecting included. Default: 1 second.
        public var timeout: Duration = .seconds(1)
        /// Attempts per plain upstream before moving to the next. Default: 2.
        public var tries: Int = 2
        /// The total time one resolution may take across all upstreams. Default: 5 seconds.
        public var budget: Duration = .seconds(5)
        /// Send every plain DNS query over TCP (for networks that tamper with UDP port 53). Default: false;
        /// truncated UDP answers are retried over TCP either way (RFC 7766 §5).
        public var useTCP: Bool = false
        /// How long an upstream that failed once is asked only after the healthy ones; it doubles with
        /// each consecutive failure, up to ``maximumHoldDown`` (see ``UpstreamHealth``). Default: 1 second.
        public var firstHoldDown: Duration = .seconds(1)
        /// The longest hold-down of a failing upstream. Default: 30 seconds.
        public var maximumHoldDown: Duration = .seconds(30)
        /// An untrusted server asked only after every trusted upstream has failed, within the same
        /// ``budget``; its answers carry source ``Resolution/Source/untrusted`` and are never cached.
        /// Default: `nil`, never: HostPin does not fall back to a resolver the caller did not trust unless
        /// told to.
        public var untrustedFallback: Upstream?
        /// Judges each answer of ``untrustedFallback`` on its own (there is no trusted answer to compare
        /// it with): one holding an address on its known hijack list, or a special-purpose address outside
        /// its ordinary ranges, is not handed out; that upstream fails with
        /// ``UpstreamFailure/Reason/hijackedAnswer(_:)`` instead. Default: every RFC 6890 block is
        /// special, no known list.
        public var untrustedFallbackDetector = HijackDetector()
        /// How answers are validated with DNSSEC (RFC 4033–4035): mode, trust anchors, insecure domains.
        /// Default: `DNSSECConfiguration()`, ``DNSSECMode/validate`` from the IANA root's key-signing keys
        /// (``TrustAnchors/ianaRoot``): a bogus answer is never used. ``DNSSECConfiguration/off`` for an
        /// upstream that cannot answer DS and DNSKEY queries (docs/ARCHITECTURE.md, "DNSSEC").
        public var dnssec: DNSSECConfiguration = DNSSECConfiguration()
        /// Split DNS: names under a route's domains go to that route's upstreams only, with its own
        /// health, failover and DNSSEC (chains built from its servers), never to ``upstreams`` nor the
        /// ``untrustedFallback``; every other name never reaches a route's servers. The route's resolver
        /// takes this configuration's timeouts, tries, budget, TCP and hold-downs. Default: none.
        public var routes: RouteTable = .none

        /// A configuration for `upstreams` with every other setting at its default.
        public init(upstreams: [Upstream]) {
            self.upstreams = upstreams
        }
    }
}
