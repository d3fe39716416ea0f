/// Asks one upstream for the addresses of one name: builds the queries, sends them through the
/// upstream's transport, and reads each reply (``AddressAnswer``).
enum AddressLookup {
    /// Asks `transport` for the A, the AAAA, or (`any`) both records of `name`.
    ///
    /// For `any` the A and AAAA queries go out together and their answers are combined
    /// (``AddressAnswer/combining(_:_:oneFamilySuffices:)``); unless `oneFamilySuffices`, the first failure
    /// of either ends the lookup at once.
    ///
    /// - Parameters:
    ///   - transport: The upstream's transport.
    ///   - name: The name to look up; not an IP literal or `localhost` (those need no query).
    ///   - family: The address family asked for.
    ///   - deadline: The budget of the resolution; `nil` for none.
    ///   - oneFamilySuffices: For `any`, whether one family's addresses are the answer even when the other
    ///     family's query failed. Trusted upstreams: no, the upstream failed and failover asks the next one
    ///     for both. The compare side: yes, it reports what the local resolver does answer.
    /// - Returns: The answer, or `nil` when the calling task was cancelled or `deadline` ran out.
    static func ask(_ transport: any UpstreamTransport, for name: HostName, family: AddressFamily,
                    deadline: ResolutionDeadline?, oneFamilySuffices: Bool) async -> AddressAnswer? {
        switch family {
        case .v4: return await ask(transport, name.text, .a, deadline)
        case .v6: return await ask(transport, name.text, .aaaa, deadline)
        case .any: break
        }
        return await withTaskGroup(of: (RecordType, AddressAnswer?).self) { group in
            for type in [RecordType.a, .aaaa] {
                group.addTask { (type, await ask(transport, name.text, type, deadline)) }
            }
            var a: AddressAnswer?
            var aaaa: AddressAnswer?
            for await (type, answer) in group {
                guard let answer else {
                    group.cancelAll()
                    return nil
                }
                if case .failed = answer, !oneFamilySuffices {
                    group.cancelAll()  // the other query's caller stops waiting; its reply is ignored
                    return answer
                }
                if type == .a { a = answer } else { aaaa = answer }
            }
            guard let a, let aaaa else { return nil }
            return .combining(a, aaaa, oneFamilySuffices: oneFamilySuffices)
        }
    }

    private static func ask(_ transport: any UpstreamTransport, _ name: String, _ type: RecordType,
                            _ deadline: ResolutionDeadline?) async -> AddressAnswer? {
        guard let query = AddressQuery.message(for: name, type: type) else {
            return .failed(.other(code: AresStatus.outOfMemory.code, message: AresStatus.outOfMemory.description))
        }
        switch await transport.exchange(query, deadline: deadline) {
        case .reply(let wire):
            guard let reply = DNSReply(wire: wire) else { return .failed(.badResponse) }
            return AddressAnswer(reading: reply, name: name, type: type)
        case .failed(let reason):
            return .failed(reason)
        case .cancelled:
            return nil
        }
    }
}
