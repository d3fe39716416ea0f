import HostPin

extension DNSResponder {
    /// As ``finish(_:over:)``, but a query that waits for the trusted cache waits in one continuation,
    /// resumed by the cache's callback path (``CachingResolver/resolveDetailed(_:family:countingLookup:completion:)``),
    /// instead of in the frames of the task-based path (the cache's, the flight's, the upstream's), which
    /// took the task a slab of its own: under a flood of new names against a silent upstream thousands
    /// wait at once, and those slabs were most of the stub's memory (heaptrack: 82 of 108 MB of peak
    /// growth, `dnsperf -Q 5000` with 100 000 names). Cancelling the calling task answers nothing at once,
    /// as ``finish(_:over:)`` does; the resolution goes on for the cache.
    func finishOnCallbacks(_ prepared: PreparedResponse, over transport: DNSTransport) async -> Reply {
        guard case .resolve(let query, let name, let family) = prepared else { return await finish(prepared, over: transport) }
        let waiter = ReplyWaiter()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard waiter.install(continuation) else { return }
                // prepare's cache lookup has counted this one.
                resolver.resolveDetailed(name, family: family, countingLookup: false) { [self] result in
                    waiter.resume(reply(to: query, family: family, result, over: transport))
                }
            }
        } onCancel: {
            waiter.resume(.none(query.question))
        }
    }
}
