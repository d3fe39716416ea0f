import FuzzSupport
@testable import HostPin

/// DNS replies from upstreams on any bytes, as every transport hands them over: `DNSReply(wire:)` (ldns)
/// and `AddressAnswer(reading:name:type:)` for the question the reply carries and for a fixed one; DoT's
/// `LengthPrefixedReader` on the same bytes as a stream. Never a crash; and:
/// - an answer with addresses holds only addresses of the type asked, reached by a CNAME chain from the
///   name asked that uses each record at most once;
/// - a query HostPin builds for a host name it could ask reads back with exactly that question (else
///   every reply to it would be judged a bad response);
/// - the stream reader yields the same messages however the stream is cut, and a framed message whole.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDNSReply(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    checkStream(bytes)
    guard let reply = DNSReply(wire: bytes) else { return 0 }
    var asked = [("www.example.test", RecordType.a), ("alias.example.test", .aaaa)]
    if let question = reply.questions.first {
        asked.append((question.name, question.type == .aaaa ? .aaaa : .a))
        checkQuery(for: question.name)
    }
    for (name, type) in asked {
        let answer = AddressAnswer(reading: reply, name: name, type: type)
        check(answer, name: name, type: type, reply: reply)
        let other = AddressAnswer(reading: reply, name: name, type: type == .a ? .aaaa : .a)
        _ = AddressAnswer.combining(answer, other)
    }
    return 0
}

func check(_ answer: AddressAnswer, name: String, type: RecordType, reply: DNSReply) {
    guard case .addresses(let addresses, let cnames) = answer else { return }
    let family: IPAddress.Family = type == .a ? .v4 : .v6
    property(!addresses.isEmpty && addresses.allSatisfy { $0.address.family == family },
             "\(name) \(type): the answer \(addresses) holds addresses of another family")
    property(cnames.count <= reply.answers.count, "\(name): a chain of \(cnames.count) from \(reply.answers.count) records")
    var current = name
    for link in cnames {
        property(link.alias == current, "\(name): the chain \(cnames) skips from \(current) to \(link.alias)")
        current = link.target
    }
}

/// The queries for `name`, when it is a host name HostPin could ask, read back with that very question.
func checkQuery(for name: String) {
    guard let host = try? HostName.parse(name), host.literalAddress == nil,
          let queries = AddressQuery.messages(for: host, types: [.a, .aaaa])
    else { return }
    for (query, type) in zip(queries, [RecordType.a, .aaaa]) {
        let read = DNSReply(wire: query)
        property(read?.questions == [DNSReply.Question(name: host.text, type: type, dnsClass: DNSReply.internetClass)]
                 && read?.isResponse == false,
                 "the \(type) query for \(host.text.debugDescription) reads back as \(String(describing: read?.questions))")
    }
}

func checkStream(_ bytes: [UInt8]) {
    func read(step: Int) -> (messages: [[UInt8]], partial: Bool) {
        var reader = LengthPrefixedReader()
        var messages: [[UInt8]] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + step)
            messages += reader.append(bytes[offset..<end])
            offset = end
        }
        return (messages, reader.holdsPartialMessage)
    }
    let whole = read(step: max(bytes.count, 1))
    for step in [1, 3] {
        let split = read(step: step)
        property(split.messages == whole.messages && split.partial == whole.partial,
                 "read \(step) at a time, the stream gives \(split.messages.count) messages, whole \(whole.messages.count)")
    }
    guard bytes.count <= Int(UInt16.max) else { return }
    let framed = LengthPrefixedReader.frame(bytes)
    var reader = LengthPrefixedReader()
    let cut = framed.count / 3
    let messages = reader.append(framed[..<cut]) + reader.append(framed[cut...])
    property(messages == [bytes] && !reader.holdsPartialMessage, "a framed message of \(bytes.count) octets reads as \(messages.count)")
}
