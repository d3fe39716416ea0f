import HostPin
import Testing

/// What every encrypted-transport test checks of a reply to a query without EDNS: the query's own ID,
/// a response, NOERROR (or the RCODE given), the same question, and the address expected.
func expectReply(_ result: EncryptedExchangeResult, to query: [UInt8], rcode: Int = 0, address: [UInt8]?,
                 sourceLocation: SourceLocation = #_sourceLocation)
{
    guard case .success(let reply) = result else {
        Issue.record("no reply: \(result)", sourceLocation: sourceLocation)
        return
    }
    #expect(EncryptedTestMessages.id(reply) == EncryptedTestMessages.id(query), sourceLocation: sourceLocation)
    #expect(EncryptedTestMessages.isResponse(reply), sourceLocation: sourceLocation)
    #expect(EncryptedTestMessages.rcode(reply) == rcode, sourceLocation: sourceLocation)
    #expect(EncryptedTestMessages.answers(reply, question: query), "the reply is to another question", sourceLocation: sourceLocation)
    if let address {
        #expect(EncryptedTestMessages.answerCount(reply) >= 1, sourceLocation: sourceLocation)
        #expect(EncryptedTestMessages.carries(reply, address: address), sourceLocation: sourceLocation)
    }
}

/// The failure of `result`, or an issue when it is a reply.
func failure(of result: EncryptedExchangeResult, sourceLocation: SourceLocation = #_sourceLocation) -> EncryptedTransportFailure? {
    guard case .failure(let failure) = result else {
        Issue.record("expected a failure, got a reply", sourceLocation: sourceLocation)
        return nil
    }
    return failure
}
