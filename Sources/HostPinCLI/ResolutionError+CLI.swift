import HostPin

extension ResolutionError {
    /// The stable `code` string of `--json` error objects. Exhaustive on purpose: a new library case
    /// must get its own code here.
    var jsonCode: String {
        switch self {
        case .nxdomain: "nxdomain"
        case .nodata: "nodata"
        case .badName: "bad_name"
        case .noUpstreams: "no_upstreams"
        case .upstreamsFailed: "upstreams_failed"
        case .timeout: "timeout"
        case .cancelled: "cancelled"
        case .setupFailed: "setup_failed"
        case .dnssecBogus: "dnssec_bogus"
        }
    }

    /// Where the failure came from, for the `source` of a `--json` error object, when the resolver asked
    /// was `asked` (`upstream` for the trusted upstreams, `untrusted` for the local resolver): NXDOMAIN,
    /// NODATA and getting no answer came from there; a bad name, no upstream, a resolver that could not be
    /// set up and a cancellation came from no server (`nil`).
    func source(askedOf asked: Resolution.Source) -> Resolution.Source? {
        switch self {
        case .nxdomain, .nodata, .upstreamsFailed, .timeout, .dnssecBogus: asked
        case .badName, .noUpstreams, .cancelled, .setupFailed: nil
        }
    }

    /// Whether the error is an answer about the name (NXDOMAIN, NODATA) rather than a failure to get one.
    var isNegativeAnswer: Bool {
        switch self {
        case .nxdomain, .nodata: true
        case .badName, .noUpstreams, .upstreamsFailed, .timeout, .cancelled, .setupFailed, .dnssecBogus: false
        }
    }

    /// The sentence for this error about `name`: the library's, which names the name for NXDOMAIN,
    /// NODATA and a bad name, prefixed with `name: ` for every failure to get an answer, so a line of
    /// many names' errors says which one failed.
    func sentence(about name: String) -> String {
        switch self {
        case .nxdomain, .nodata, .badName: description
        case .noUpstreams, .upstreamsFailed, .timeout, .cancelled, .setupFailed, .dnssecBogus: "\(name): \(description)"
        }
    }

    /// The `lookup` exit status for a name that failed this way: 1 for a negative answer, 2 for a bad
    /// name (validated earlier, so not expected here), 3 for every failure to get an answer, a bogus one
    /// included.
    var lookupExitStatus: ExitStatus {
        switch self {
        case .nxdomain, .nodata: .notFound
        case .badName: .usage
        case .noUpstreams, .upstreamsFailed, .timeout, .cancelled, .setupFailed, .dnssecBogus: .upstreamFailure
        }
    }

    /// The sentence for this error when the untrusted (local) resolver returned it. The library's sentence
    /// for `upstreamsFailed` speaks of trusted upstreams, which would mislabel the local resolver.
    var untrustedDescription: String {
        switch self {
        case .upstreamsFailed(let failures):
            "the local resolver did not answer: " + failures.map(\.description).joined(separator: "; ")
        case .nxdomain, .nodata, .badName, .noUpstreams, .timeout, .cancelled, .setupFailed, .dnssecBogus:
            description
        }
    }

    /// The DNSSEC status a failure carries in `--json`: `bogus` with the reason for
    /// ``ResolutionError/dnssecBogus(_:_:)``, `nil` for every other failure (a validated NXDOMAIN or NODATA
    /// carries its status on its ``NegativeAnswer`` instead).
    var dnssecStatus: DNSSECStatus? {
        if case .dnssecBogus(let reason, _) = self { .bogus(reason) } else { nil }
    }
}
