/// One comparison: the local resolver's answer, the wildcard probe when it is evidence, the verdict.
struct WatchComparer: Sendable {
    let local: any HostResolver
    let trusted: any HostResolver
    let detector: HijackDetector
    let probesWildcard: Bool

    /// The verdict on the local answer for `item`, and the local addresses; `nil` when the task was
    /// cancelled meanwhile (the watch stopped).
    func compare(_ item: WatchQueue.Item) async -> (HijackVerdict, [IPAddress])? {
        let claim: Result<Resolution, ResolutionError>
        do throws(ResolutionError) {
            claim = .success(try await local.resolve(item.name, family: item.family))
        } catch {
            claim = .failure(error)
        }
        guard !Task.isCancelled else { return nil }
        var extra: [IPAddress] = []
        if case .success(let resolution) = claim { extra = HijackDetector.untrustedAddresses(resolution, trusted: item.trusted) }
        var wildcard: WildcardProbe?
        if !extra.isEmpty, probesWildcard {
            wildcard = await WildcardProbe.run(beside: item.name, family: item.family, trusted: trusted, local: local)
            guard !Task.isCancelled else { return nil }
        }
        let addresses = (try? claim.get())?.ipAddresses ?? []
        return (detector.verdict(trusted: item.trusted, local: claim, wildcard: wildcard), addresses)
    }
}
