/// Asks one upstream for the addresses of one name: builds the queries, sends them through the
/// upstream's transport, and reads each reply (``AddressAnswer``).
enum AddressLookup {
    /// Asks `transport` for the A, the AAAA, or (`any`) both records of `name`.
    ///
    /// For `any` the A and AAAA queries go out together and their answers are combined
    /// (``AddressAnswer/combining(_:_:)``).
    ///
    /// - Parameters:
    ///   - transport: The upstream's transport.
    ///   - name: The name to look up; not an IP literal or `localhost` (those need no query).
    ///   - family: The address family asked for.
    ///   - deadline: The budget of the resolution; `nil` for none.
    /// - Returns: The answer, or `nil` when the calling task was cancelled or `deadline` ran out.
    static func ask(_ transport: any UpstreamTransport, for name: HostName, family: AddressFamily,
                    deadline: ResolutionDeadline?) async -> AddressAnswer? {
        let types = RecordType.addressTypes(for: family)
        guard let queries = AddressQuery.messages(for: name.text, types: types) else {
            return .failed(.other(code: AresStatus.outOfMemory.code, message: AresStatus.outOfMemory.description))
        }
        var answers: [AddressAnswer] = []
        for (type, outcome) in zip(types, await transport.exchange(queries, deadline: deadline)) {
            switch outcome {
            case .reply(let wire):
                guard let reply = DNSReply(wire: wire) else {
                    answers.append(.failed(.badResponse))
                    continue
                }
                answers.append(AddressAnswer(reading: reply, name: name.text, type: type))
            case .failed(let reason):
                answers.append(.failed(reason))
            case .cancelled:
                return nil
            }
        }
        guard answers.count == 2 else { return answers.first }
        return .combining(answers[0], answers[1])
    }
}
