extension TrustedResolver {
    /// `outcome`, from `upstream`, after DNSSEC validation (``Configuration/dnssec``) by `validator` of
    /// the replies that made it (`signed`): marked secure (its TTLs capped by the verdict's), insecure or
    /// indeterminate; when bogus, in ``DNSSECMode/validate`` mode, that upstream's failure
    /// ``UpstreamFailure/Reason/dnssecBogus(_:)`` (the next upstream is asked), in ``DNSSECMode/report``
    /// mode handed out marked ``DNSSECStatus/bogus(_:)``. A name at or below an insecure domain is not
    /// validated: insecure. A failure without addresses, and any outcome when `validator` is `nil`
    /// (``DNSSECMode/off``), goes on as it is. `completion` runs on the thread that ended the last chain
    /// query, or at once.
    func validated(_ outcome: Outcome, signed: [SignedReply], name: HostName, by validator: UpstreamValidator?,
                   from upstream: Upstream, deadline: ResolutionDeadline,
                   completion: @escaping @Sendable (Outcome) -> Void) {
        guard let validator else { return completion(outcome) }
        switch outcome {
        case .cancelled, .failed(_, partial: nil): return completion(outcome)
        case .answered, .failed: break
        }
        if isInsecureDomain(name.text) { return completion(Self.marked(outcome, .insecure, ttls: nil)) }
        guard !signed.isEmpty, let owner = WireName(name.text) else {
            // Never: a reply that answered always comes with its records, and a HostName is a valid name.
            return completion(.failed(UpstreamFailure(upstream: upstream, reason: .badResponse), partial: nil))
        }
        let mode = configuration.dnssec.mode
        validator.validate(signed[...], name: owner, deadline: deadline) { verdict in
            guard let verdict else { return completion(.cancelled) }
            completion(Self.applying(verdict, to: outcome, from: upstream, mode: mode))
        }
    }

    /// Whether `name` (presentation form, no final dot) is at or below one of
    /// ``DNSSECConfiguration/insecureDomains`` (negative trust anchors, RFC 7646).
    func isInsecureDomain(_ name: String) -> Bool {
        configuration.dnssec.insecureDomains.contains { domain in
            name == domain.text || name.hasSuffix("." + domain.text)
        }
    }

    /// What `verdict` makes of `outcome`.
    private static func applying(_ verdict: DNSSECVerdict, to outcome: Outcome, from upstream: Upstream,
                                 mode: DNSSECMode) -> Outcome {
        switch verdict {
        case .secure(let ttls): return marked(outcome, .secure, ttls: ttls)
        case .insecure(let why): return marked(outcome, .insecure, ttls: nil, insecurity: why.told)
        case .indeterminate: return marked(outcome, .indeterminate, ttls: nil)
        case .bogus(let reason):
            guard mode == .validate else { return marked(outcome, .bogus(reason), ttls: nil) }
            switch outcome {
            // The addresses of the family that answered are bogus too (`any`, the other family failed):
            // no last resort, and bogus is what the upstream is failed for — what it did answer is forged
            // or broken, which says more than the other family's REFUSED or timeout (the on-path box
            // answers A and refuses AAAA).
            case .answered, .failed:
                return .failed(UpstreamFailure(upstream: upstream, reason: .dnssecBogus(reason)), partial: nil)
            case .cancelled: return outcome
            }
        }
    }

    /// `outcome` carrying `status` (and `insecurity`, an insecure verdict's reason), each RRset's TTL at
    /// most its verified TTL in `ttls`.
    private static func marked(_ outcome: Outcome, _ status: DNSSECStatus, ttls: SecureTTLs?,
                               insecurity: InsecureReason? = nil) -> Outcome {
        switch outcome {
        case .answered(let received):
            switch received.answer {
            case .addresses(let resolution):
                var validated = resolution.validated(status, ttls: ttls)
                validated.insecurity = insecurity
                return .answered(.received(validated))
            case .negative(let negative):
                var validated = negative.validated(status, ttls: ttls)
                validated.insecurity = insecurity
                return .answered(.received(validated))
            }
        case .failed(let failure, let partial):
            var validated = partial?.validated(status, ttls: ttls)
            validated?.insecurity = insecurity
            return .failed(failure, partial: validated)
        case .cancelled: return outcome
        }
    }

    /// The error of a resolution that no upstream answered: ``ResolutionError/dnssecBogus(_:_:)`` with the
    /// first bogus reason when at least one upstream's answer was bogus, else
    /// ``ResolutionError/upstreamsFailed(_:)``; both list every failure in the order asked.
    static func exhausted(_ failures: [UpstreamFailure]) -> ResolutionError {
        for failure in failures {
            if case .dnssecBogus(let reason) = failure.reason { return .dnssecBogus(reason, failures) }
        }
        return .upstreamsFailed(failures)
    }
}

extension Resolution {
    /// The resolution marked with what validation found, each address and CNAME TTL capped by its own
    /// RRset's verified TTL in `ttls` (its signature's original TTL and expiry, RFC 4035 §5.3.3).
    func validated(_ status: DNSSECStatus, ttls: SecureTTLs?) -> Resolution {
        Resolution(name: name, addresses: addresses.map { address in
                       let type = address.address.family == .v4 ? DNSSECRecord.Kind.a : DNSSECRecord.Kind.aaaa
                       return ResolvedAddress(address: address.address, ttl: min(address.ttl, ttls?.addresses(type) ?? .max))
                   },
                   cnames: cnames.map { $0.capped(ttls) }, upstream: upstream, source: source,
                   receivedAt: receivedAt, dnssec: status)
    }
}

extension NegativeAnswer {
    /// The negative answer marked with what validation found, its SOA's TTL capped by the denial's verified
    /// TTL in `ttls` and each CNAME's by its own.
    func validated(_ status: DNSSECStatus, ttls: SecureTTLs?) -> NegativeAnswer {
        let cap = ttls?.denial ?? .max
        let capped = soa.map {
            SOARecord(zone: $0.zone, ttl: min($0.ttl, cap), primaryServer: $0.primaryServer, mailbox: $0.mailbox,
                      serial: $0.serial, refresh: $0.refresh, retry: $0.retry, expire: $0.expire, minimum: $0.minimum)
        }
        return NegativeAnswer(name: name, family: family, kind: kind, cnames: cnames.map { $0.capped(ttls) }, soa: capped,
                              upstream: upstream, source: source, receivedAt: receivedAt, dnssec: status)
    }
}

extension CNAMERecord {
    fileprivate func capped(_ ttls: SecureTTLs?) -> CNAMERecord {
        guard let cap = ttls?.cname(alias), cap < ttl else { return self }
        return CNAMERecord(alias: alias, target: target, ttl: cap)
    }
}
