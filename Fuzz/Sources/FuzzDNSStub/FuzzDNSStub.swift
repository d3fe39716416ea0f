import CLDNS
import Dispatch
import Foundation
import FuzzSupport
import HostPin
@testable import HostPinDNS

/// The DNS stub's whole path on any bytes a client can send: `DNSResponder.respond(to:over:)` — the
/// message read with ldns (`IncomingMessage`), planned (`QueryPlan`: rules, BADVERS, REFUSED, ANY,
/// forward), answered from the trusted cache or from an upstream, and written back with ldns
/// (`ResponseWriter`, including a forwarded reply relayed) — over UDP and TCP, asked twice and once more
/// with another ID and the name in another letter case (the answer cache's and the forward cache's hits).
/// The upstreams answer at once or fail (``InstantUpstream``, ``EchoForwarder``: no network), on a frozen
/// clock, so every response is determined by the input. Never a crash, never a hang (no response within
/// 5 s), and:
/// - a message of at least a header with QR clear gets a response, any other none;
/// - the response reads back with ldns, has the query's ID, QR set, the query's OPCODE, at most one
///   question, and fits what the transport allows (512 octets over UDP without EDNS, else the smaller
///   of the client's and the stub's 1232, at least 512);
/// - when ldns reads the query with exactly one question, the response echoes it octet for octet (name
///   in the client's letter case, type, class);
/// - the response has an OPT record only when the query had one;
/// - the same query asked again gets the same response (cache hits answer as the first miss did), and
///   a plain query with another ID and letter case the same response with that ID and name.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDNSStub(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let query = fuzzInput(data, size)
    // One task per input (a task's start costs more than a response), waited for on this thread
    // (libFuzzer's, none of the cooperative pool's).
    let done = DispatchSemaphore(value: 0)
    Task {
        await ask(query)
        done.signal()
    }
    property(done.wait(timeout: .now() + 5) == .success, "\(hex(query)): no response within 5 s")
    return 0
}

/// Asks a fresh stub `query` over UDP and TCP, twice, and once more in another letter case and ID.
func ask(_ query: [UInt8]) async {
    // A fresh stub per input, so that no input's cache entries change another's response.
    let responder = DNSResponder(resolver: CachingResolver(upstream: InstantUpstream(), cache: ResolutionCache(clock: FrozenClock())),
                                 rules: rules, forwarder: EchoForwarder(query: query),
                                 blockedAnswer: query.count % 2 == 0 ? .nxdomain : .unspecified, metrics: metrics)
    for transport in [DNSTransport.udp, .tcp] {
        let first = await responder.respond(to: query, over: transport)
        check(first, to: query, over: transport)
        let again = await responder.respond(to: query, over: transport)
        property(again == first, "asked again over \(transport), \(hex(query)) is answered \(hex(again)), first \(hex(first))")
        guard let first, let variant = otherCaseAndID(query) else { continue }
        let response = await responder.respond(to: variant.bytes, over: transport)
        // The response with the variant's ID, and its name where the response echoes the question.
        var expected = first
        expected.replaceSubrange(0..<2, with: variant.bytes[0..<2])
        if first.count >= 12 + variant.nameLength, first[4] == 0, first[5] == 1 {
            expected.replaceSubrange(12..<(12 + variant.nameLength), with: variant.bytes[12..<(12 + variant.nameLength)])
        }
        property(response == expected,
                 "over \(transport), \(hex(variant.bytes)) is answered \(hex(response)), \(hex(query)) \(hex(first))")
    }
}

/// The rules the stub plans with: a blocked name and a pinned one (the lab's).
let rules = try! Rules(json: Data("""
    {"rules": [{"action": "block", "host": "ads.example.test"},
               {"action": "pin", "host": "api.example.test", "addresses": ["127.0.0.10", "::1"]},
               {"action": "block", "host": "*.blocked.test"}]}
    """.utf8), relativeTo: URL(fileURLWithPath: "/"))

let metrics = DNSQueryMetrics()

/// The properties every response holds (see the file's description).
func check(_ response: [UInt8]?, to query: [UInt8], over transport: DNSTransport) {
    let answered = query.count >= 12 && query[2] & 0x80 == 0
    guard let response else {
        property(!answered, "\(hex(query)) over \(transport) gets no response")
        return
    }
    property(answered, "\(hex(query)) over \(transport) is answered \(hex(response))")
    let read = Read(response)
    guard let read else {
        property(false, "the response \(hex(response)) to \(hex(query)) over \(transport) does not read")
        return
    }
    let id = UInt16(query[0]) << 8 | UInt16(query[1])
    property(read.id == id && read.isResponse && read.opcode == (query[2] >> 3) & 0xF && read.questions.count <= 1,
             "the response \(hex(response)) to \(hex(query)): ID \(read.id), QR \(read.isResponse), OPCODE \(read.opcode), \(read.questions.count) questions")
    let asked = Read(query)
    if let asked, asked.questions.count == 1 {
        property(read.questions == asked.questions,
                 "the response \(hex(response)) to \(hex(query)) asks \(read.questions), not \(asked.questions)")
    }
    property(read.udpSize == nil || asked?.udpSize != nil, "the response \(hex(response)) to \(hex(query)) has an OPT record it had not")
    let limit = switch transport {
    case .tcp: Int(UInt16.max)
    case .udp: asked?.udpSize.map { max(512, Int(min($0, 1232))) } ?? 512
    }
    property(response.count <= limit, "the response to \(hex(query)) over \(transport) is \(response.count) octets, over \(limit)")
}

/// A message as ldns reads it: what the properties look at.
struct Read {
    struct Question: Equatable, CustomStringConvertible {
        let wireName: [UInt8]
        let type: UInt32
        let dnsClass: UInt32

        var description: String { "\(hex(wireName)) TYPE\(type) CLASS\(dnsClass)" }
    }

    let id: UInt16
    let isResponse: Bool
    let opcode: UInt8
    let questions: [Question]
    /// The OPT record's UDP payload size; `nil` without one.
    let udpSize: UInt16?

    init?(_ wire: [UInt8]) {
        var parsed: UnsafeMutablePointer<ldns_pkt>?
        guard wire.withUnsafeBufferPointer({ ldns_wire2pkt(&parsed, $0.baseAddress, $0.count) }) == LDNS_STATUS_OK,
              let packet = parsed else { return nil }
        defer { ldns_pkt_free(packet) }
        id = ldns_pkt_id(packet)
        isResponse = ldns_pkt_qr(packet)
        opcode = UInt8(truncatingIfNeeded: ldns_pkt_get_opcode(packet).rawValue)
        let list = ldns_pkt_question(packet)
        questions = (0..<(list.map { ldns_rr_list_rr_count($0) } ?? 0)).compactMap { index in
            guard let rr = ldns_rr_list_rr(list, index), let owner = ldns_rr_owner(rr), let data = ldns_rdf_data(owner)
            else { return nil }
            return Question(wireName: Array(UnsafeBufferPointer(start: data, count: ldns_rdf_size(owner))),
                            type: ldns_rr_get_type(rr).rawValue, dnsClass: ldns_rr_get_class(rr).rawValue)
        }
        udpSize = ldns_pkt_edns(packet) ? ldns_pkt_edns_udp_size(packet) : nil
    }
}

/// A plain query (one the answer cache keys, `AnswerKey`) with its ID inverted and the letters of its
/// name in the other case, and the name's length in wire form; `nil` for any other message.
func otherCaseAndID(_ query: [UInt8]) -> (bytes: [UInt8], nameLength: Int)? {
    guard let key = AnswerKey(query: query, over: .udp) else { return nil }
    var bytes = query
    bytes[0] = ~bytes[0]
    bytes[1] = ~bytes[1]
    // Label length octets are at most 63 in a plain query, below every letter.
    for index in 12..<(12 + key.nameLength) where (bytes[index] | 0x20) >= 0x61 && (bytes[index] | 0x20) <= 0x7A {
        bytes[index] ^= 0x20
    }
    return (bytes, key.nameLength)
}

/// Octets in hexadecimal (the first 600), for messages.
func hex(_ bytes: [UInt8]?) -> String {
    guard let bytes else { return "(none)" }
    let digits = Array("0123456789abcdef")
    return String(bytes.prefix(600).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] }) + (bytes.count > 600 ? "…" : "")
}

/// A clock that never moves: a cached answer's age stays 0, so asking again gives the same TTLs.
struct FrozenClock: MonotonicClock {
    func nanoseconds() -> UInt64 { 1_000_000_000_000 }
}

/// FNV-1a of `text` lower-cased: the same on every run (Swift's `Hasher` is seeded per process).
func stableHash(_ text: String) -> UInt64 {
    text.lowercased().utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
}

let upstream = Upstream("127.0.0.53:53")!

/// The trusted resolver behind the cache, answering at once: what it answers depends on the name alone
/// — addresses (TTL 0, a minute, past the cache's ceiling), a CNAME chain (to a name, or to one ldns
/// cannot write), NXDOMAIN and NODATA with or without the zone's SOA, an upstream failure, a timeout.
struct InstantUpstream: HostResolver {
    func resolve(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> Resolution {
        let outcome = try await resolveDetailed(name, family: family)
        switch outcome.answer {
        case .addresses(let resolution): return resolution
        case .negative(let negative): throw negative.kind == .nxdomain ? .nxdomain(name) : .nodata(name, family)
        }
    }

    func resolveDetailed(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> ResolutionOutcome {
        let now = Date(timeIntervalSince1970: 1_767_225_600)
        let v6 = family == .v6
        func addresses(_ ttls: [UInt32]) -> [ResolvedAddress] {
            ttls.enumerated().map { index, ttl in
                ResolvedAddress(address: IPAddress(v6 ? "2001:db8::\(index + 1)" : "127.0.0.\(index + 10)")!, ttl: ttl)
            }
        }
        func positive(_ ttls: [UInt32], cnames: [CNAMERecord] = []) -> ResolutionOutcome {
            let resolution = Resolution(name: name, addresses: addresses(ttls), cnames: cnames, upstream: upstream,
                                        source: .upstream, receivedAt: now)
            return ResolutionOutcome(answer: .addresses(resolution), ttlLeft: min(resolution.ttl, 86_400), age: 0)
        }
        func negative(_ kind: NegativeAnswer.Kind, soa: Bool) -> ResolutionOutcome {
            let zone = name.text.split(separator: ".", maxSplits: 1).last.map(String.init) ?? name.text
            let record = SOARecord(zone: zone, ttl: 3600, primaryServer: "ns.\(zone)", mailbox: "hostmaster.\(zone)",
                                   serial: 2_024_010_101, refresh: 3600, retry: 600, expire: 86_400, minimum: 60)
            let answer = NegativeAnswer(name: name, family: family, kind: kind, cnames: [], soa: soa ? record : nil,
                                        upstream: upstream, source: .upstream, receivedAt: now)
            return ResolutionOutcome(answer: .negative(answer), ttlLeft: soa ? 60 : 0, age: 0)
        }
        switch stableHash(name.text) % 10 {
        case 0: return positive([300])
        case 1: return positive([0, 60, 3600])
        case 2: return positive([200_000], cnames: [CNAMERecord(alias: name.text, target: "target.example.test", ttl: 30)])
        case 3: return positive([60], cnames: [CNAMERecord(alias: name.text, target: String(repeating: "x", count: 64) + ".test", ttl: 30)])
        case 4: return negative(.nxdomain, soa: true)
        case 5: return negative(.nodata, soa: true)
        case 6: return negative(.nxdomain, soa: false)
        case 7: return negative(.nodata, soa: false)
        case 8: throw .upstreamsFailed([UpstreamFailure(upstream: upstream, reason: .servfail)])
        default: throw .timeout(budget: .seconds(5), [UpstreamFailure(upstream: upstream, reason: .timeout)])
        }
    }
}

/// The upstream of the forwarded types, answering at once: with the client's own message as a response
/// (QR set: its records, whatever the input holds, are the reply's), with that cut short, or failing —
/// chosen by the question.
struct EchoForwarder: DNSForwarder {
    let query: [UInt8]

    func forward(_ question: ForwardedQuestion) async throws(ResolutionError) -> [UInt8] {
        var reply = query
        reply[2] |= 0x80
        switch (stableHash(question.name) &+ UInt64(question.type)) % 4 {
        case 0, 1: return reply
        case 2: return Array(reply.prefix(12 + (reply.count - 12) / 2))
        default: throw .upstreamsFailed([UpstreamFailure(upstream: upstream, reason: .refused)])
        }
    }
}
