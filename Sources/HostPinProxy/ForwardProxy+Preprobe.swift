import HostPin

extension ForwardProxy {
    /// Probes `names` ahead of their first CONNECT (issue 30: the pre-resolve list's names): for each
    /// that resolves to more than one address, the background TLS handshake ``RankingProbe``
    /// makes for a CONNECT target on `port`, so the first tunnel to the name already goes to its fastest
    /// verified address and passes a likely sinkhole (counted and logged as a tunnel's probe does). At most
    /// the probe's ``RankingProbe/Configuration/maximumConcurrentProbes`` at once: this waits (suspended,
    /// 100 ms at a time) for one to end before the next. A name that does not resolve, or to one address,
    /// is left to its first request. Returns once every name was started or the task was cancelled.
    public func probe(_ names: [HostName], port: UInt16 = 443) async {
        guard let rankingProbe, !names.isEmpty else { return }
        let (metrics, log) = (configuration.metrics, configuration.diagnosticLog)
        for name in names {
            // Resolved as a CONNECT to it would be (a hit when the pre-resolve already ran).
            guard let addresses = try? await resolver.resolve(name, family: .any).ipAddresses, addresses.count > 1 else { continue }
            while rankingProbe.runningCount >= rankingProbe.configuration.maximumConcurrentProbes {
                guard (try? await Task.sleep(for: .milliseconds(100))) != nil else { return }
            }
            guard !Task.isCancelled else { return }
            rankingProbe.probe(name, port: port, addresses: addresses) { sinkhole in
                metrics?.countSinkhole()
                log?("hostpin proxy: \(sinkhole)")
            }
        }
    }
}
