import Dispatch

/// The batch path's first ask (docs/ARCHITECTURE.md, "Bulk lookups"): a block of names' queries to the
/// first upstream of the health plan in one ``AresQueryBlock``, each answer read on the channel's thread
/// with no deadline, attempts record or closure chain per name. Anything but an answer goes on exactly
/// as ``resolveDetailed(_:family:completion:)`` would from that upstream's failure.
extension TrustedResolver {
    /// Where a block's queries go: the upstream at `index` of the health plan's `order`, through
    /// `channel`, from `start` (when the block was handed over; the budget of each of its names runs from
    /// then).
    struct Lane: Sendable {
        let index: Int
        let order: [Int]
        let channel: AresChannel
        let start: ContinuousClock.Instant
        let meter: UpstreamMetrics.Meter
    }

    /// Whether a batch may resolve `family` through blocks (``lane(probingWith:family:)``): plain answers
    /// (no validation), one record type per name, and c-ares's own tries ending within the budget, so that
    /// no deadline is needed for the first upstream (``Configuration/timeout`` × (2^tries − 1), with a
    /// tenth of the budget to spare).
    func takesBlocks(family: AddressFamily) -> Bool {
        guard validators.isEmpty, family != .any, configuration.tries >= 1, configuration.tries < 16 else { return false }
        let longest = configuration.timeout * ((1 << configuration.tries) - 1)
        return longest * 10 < configuration.budget * 9
    }

    /// Whether `name` is resolved by this resolver itself (no route takes it).
    func resolvesItself(_ name: HostName) -> Bool { resolver(for: name) === self }

    /// Takes the health plan for a block whose first name is `name`, running the probes it claims as
    /// ``resolveDetailed(_:family:completion:)`` does; the lane when its first upstream is a c-ares channel,
    /// else `nil` (each name then goes the usual way).
    func lane(probingWith name: HostName, family: AddressFamily) -> Lane? {
        let plan = health.plan()
        for index in plan.probes { probe(index, name: name, family: family) }
        guard let index = plan.order.first, let channel = transports[index] as? AresChannel else { return nil }
        return Lane(index: index, order: plan.order, channel: channel, start: .now, meter: metrics.meter(at: index))
    }

    /// Reads the outcome of one name's query sent through `lane`: the outcome when the upstream answered
    /// (its success recorded in ``health``), or `nil` when it failed, and then `completion` gets what the
    /// resolution ends with after the rest of the plan and the fallback were asked, under a deadline whose
    /// budget ran from ``Lane/start``.
    func laneOutcome(_ exchange: ExchangeOutcome, lane: Lane, name: HostName, family: AddressFamily)
        -> Result<ResolutionOutcome, ResolutionError>?
    {
        var signed: [SignedReply]?
        let answer = AddressLookup.read([exchange], types: RecordType.addressTypes(for: family), name: name,
                                        roundTrip: .now - lane.start, deadline: nil, meter: lane.meter, signed: &signed)
        let outcome = Self.outcome(of: answer, from: configuration.upstreams[lane.index], name, family, source: .upstream)
        switch outcome {
        case .answered(let answered):
            health.recordSuccess(lane.index)
            return .success(answered)
        case .cancelled:
            return .failure(.cancelled)
        case .failed:
            return nil
        }
    }

    /// Goes on after the first upstream of `lane` failed `name` (``laneOutcome(_:lane:name:family:)``
    /// returned `nil`): the failure recorded, the next upstreams and the fallback asked, as
    /// ``resolveDetailed(_:family:completion:)`` would; `completion` gets the result.
    func laneFailed(_ exchange: ExchangeOutcome, lane: Lane, name: HostName, family: AddressFamily,
                    completion: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) {
        var signed: [SignedReply]?
        let answer = AddressLookup.read([exchange], types: RecordType.addressTypes(for: family), name: name,
                                        roundTrip: .zero, deadline: nil, meter: nil, signed: &signed)
        let upstream = configuration.upstreams[lane.index]
        let outcome = Self.outcome(of: answer, from: upstream, name, family, source: .upstream)
        let deadline = ResolutionDeadline(attempts: Attempts(), budget: configuration.budget, health: health,
                                          start: lane.start)
        deadline.attempts.begin(upstream, index: lane.index)
        // The rest of the budget on a timer of its own: the shared one holds its deadlines in the order they
        // started, and this one started earlier than those queued since. Failures are few.
        let left = deadline.remaining
        if left > .zero {
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(left.nanoseconds))) { deadline.expire() }
        } else {
            deadline.expire()
        }
        askedInOrder(outcome, index: lane.index, name, family: family, order: lane.order[...], deadline: deadline,
                     lastResort: nil) { result in
            completion(deadline.complete(result))
        }
    }
}

extension Duration {
    /// Whole nanoseconds, clamped to `Int64`.
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds.multipliedReportingOverflow(by: 1_000_000_000).overflow
            ? .max : seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
