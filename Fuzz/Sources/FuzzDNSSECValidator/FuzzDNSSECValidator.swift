import CLDNS
import Foundation
import FuzzSupport
@testable import HostPin

/// The DNSSEC validator on any bytes: `AnswerValidation` (the state machine of one answer) driven to its
/// verdict, its chain requests answered from the input, and `TrustAnchors.load` (`--trust-anchor FILE`)
/// on the anchor's text. The input:
///
///     8 octets   the check time, seconds since 1970, big-endian (a seed keeps its signatures valid)
///     1 octet    bit 0: frame 0 is a trust-anchor file's text; else a DNS message whose DS and DNSKEY
///                records are the anchors. Bits 1-2: the claim (0 read from frame 1's RCODE and answer,
///                1 answer, 2 NXDOMAIN, 3 NODATA)
///     frames     each a 2-octet big-endian length and that many octets:
///                frame 0, the anchors; frame 1, the reply validated (its question, answer and authority
///                sections); frames 2…, the chain's replies: a DNSKEY or DS request is answered with the
///                answer and authority records of the first frame whose question is that name and type,
///                nothing when none is (as an upstream that answers NODATA without proof)
///
/// Messages are read with ldns (`ldns_wire2pkt`), as HostPin's transports read replies. Never a crash or
/// a hang, and:
/// - a verdict within ``ValidationLimits/chainQueries`` chain requests, and at most
///   ``ValidationLimits/checksPerResolution`` signature checks;
/// - no trust anchor above the question: indeterminate;
/// - secure only when the reply carries an RRSIG, with a TTL no longer than the reply's longest;
/// - the same validation with the DNSKEY sets the first one settled (as a `KeyCache` hands them in) is
///   secure again when the first was secure;
/// - a trust-anchor file that loads holds at least one anchor.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDNSSECValidator(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    guard bytes.count >= 9 else { return 0 }
    let now = Int64(bitPattern: bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    let flags = bytes[8]
    let frames = readFrames(bytes[9...])
    guard frames.count >= 2 else { return 0 }

    let anchors: TrustAnchors
    if flags & 1 != 0 {
        guard let loaded = loadAnchorFile(frames[0]) else { return 0 }
        anchors = loaded
    } else {
        guard let message = Message(frames[0]) else { return 0 }
        anchors = TrustAnchors(records: message.answer + message.authority)
    }
    guard let reply = Message(frames[1]), let question = reply.question else { return 0 }
    let chain = frames.dropFirst(2).compactMap(Message.init)

    let claim: AnswerValidation.Claim
    switch flags >> 1 & 3 {
    case 1: claim = .answer
    case 2: claim = .nxdomain
    case 3: claim = .nodata
    default:
        claim = reply.rcode == 3 ? .nxdomain
            : reply.answer.contains { $0.type == question.type } ? .answer : .nodata
    }
    func answer(_ request: ChainRequest) -> [DNSSECRecord] {
        let (name, type) = switch request {
        case .dnskey(let zone): (zone, DNSSECRecord.Kind.dnskey)
        case .ds(let zone): (zone, DNSSECRecord.Kind.ds)
        }
        guard let found = chain.first(where: { $0.question?.name == name && $0.question?.type == type }) else { return [] }
        return found.answer + found.authority
    }

    let limits = ValidationLimits()
    var first = AnswerValidation(name: question.name, type: question.type, answer: reply.answer, authority: reply.authority,
                                 claim: claim, anchors: anchors, now: now, limits: limits)
    let verdict = run(&first, limits: limits, answer: answer)
    if printsVerdicts { print("\(question.name) \(RRset.typeName(question.type)) \(claim): \(verdict)") }
    property(first.checksSpent <= limits.checksPerResolution,
             "\(first.checksSpent) signature checks, above the cap of \(limits.checksPerResolution)")
    if anchors.closest(to: question.name) == nil {
        property(verdict == .indeterminate, "no anchor covers \(question.name), yet \(verdict)")
    }
    if case .secure(let ttls) = verdict {
        let records = reply.answer + reply.authority
        property(records.contains { $0.type == DNSSECRecord.Kind.rrsig }, "secure without an RRSIG: \(question.name) \(claim)")
        let longest = records.map(\.ttl).max() ?? 0
        let kept = (Array(ttls.records.values) + Array(ttls.cnames.values)).max() ?? 0
        property(kept <= longest, "an RRset secure for \(kept) s, longer than the reply's longest TTL \(longest)")

        var cache = KeyCache()
        cache.store(first.validatedKeys, at: 0)
        var second = AnswerValidation(name: question.name, type: question.type, answer: reply.answer,
                                      authority: reply.authority, claim: claim, anchors: anchors,
                                      knownKeys: cache.keys(at: 0), now: now, limits: limits)
        let again = run(&second, limits: limits, answer: answer)
        if case .secure = again {} else { property(false, "secure, then \(again) with the keys it settled") }
    }
    return 0
}

/// `FUZZ_DNSSEC_VERDICTS=1` prints each input's verdict (`scripts/fuzz run dnssec-validator Fuzz/Seeds/dnssec-validator/*`
/// shows the seeds' verdicts beside the signed lab's table).
let printsVerdicts = ProcessInfo.processInfo.environment["FUZZ_DNSSEC_VERDICTS"] == "1"

/// Drives `validation` to its verdict; a request past the chain-query cap, or no verdict after it, breaks
/// the property.
func run(_ validation: inout AnswerValidation, limits: ValidationLimits,
         answer: (ChainRequest) -> [DNSSECRecord]) -> DNSSECVerdict {
    var step = validation.start()
    var requests: [ChainRequest] = []
    while case .fetch(let request) = step {
        requests.append(request)
        property(requests.count <= limits.chainQueries, "more than \(limits.chainQueries) chain requests: \(requests)")
        step = validation.received(request, records: answer(request))
    }
    guard case .verdict(let verdict) = step else { fatalError("unreachable") }
    return verdict
}

/// `bytes` cut into length-prefixed frames; a last frame shorter than its length is dropped.
func readFrames(_ bytes: ArraySlice<UInt8>) -> [[UInt8]] {
    var frames: [[UInt8]] = []
    var index = bytes.startIndex
    while index + 2 <= bytes.endIndex {
        let length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
        index += 2
        guard index + length <= bytes.endIndex else { break }
        frames.append(Array(bytes[index..<(index + length)]))
        index += length
    }
    return frames
}

/// The folder the anchor file is written to: this process's own, in memory when /dev/shm is there.
let anchorFile: String = {
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    let folder = "\(base)/hostpin-fuzz-dnssec-validator-\(getpid())"
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder + "/anchor.ds"
}()

/// `TrustAnchors.load(path:)` on `text` written to a file; `nil` when it refuses it.
func loadAnchorFile(_ text: [UInt8]) -> TrustAnchors? {
    guard FileManager.default.createFile(atPath: anchorFile, contents: Data(text)) else { return nil }
    do {
        let anchors = try TrustAnchors.load(path: anchorFile)
        property(!anchors.anchors.isEmpty, "a trust-anchor file loaded with no anchor")
        return anchors
    } catch {
        property(!error.description.isEmpty, "a trust-anchor error without a description")
        return nil
    }
}

/// A DNS message's question and sections, read by ldns, as the validator takes them.
struct Message {
    let question: (name: WireName, type: UInt16)?
    let rcode: UInt8
    let answer: [DNSSECRecord]
    let authority: [DNSSECRecord]

    init?(_ wire: [UInt8]) {
        var parsed: UnsafeMutablePointer<ldns_pkt>?
        let status = wire.withUnsafeBufferPointer { ldns_wire2pkt(&parsed, $0.baseAddress, $0.count) }
        guard status == LDNS_STATUS_OK, let packet = parsed else { return nil }
        defer { ldns_pkt_free(packet) }
        func records(_ list: UnsafeMutablePointer<ldns_rr_list>?) -> [DNSSECRecord] {
            guard let list else { return [] }
            return (0..<ldns_rr_list_rr_count(list)).compactMap { ldns_rr_list_rr(list, $0).flatMap { DNSSECRecord(UnsafePointer($0)) } }
        }
        question = records(ldns_pkt_question(packet)).first.map { ($0.owner, $0.type) }
        rcode = UInt8(truncatingIfNeeded: ldns_pkt_get_rcode(packet).rawValue)
        answer = records(ldns_pkt_answer(packet))
        authority = records(ldns_pkt_authority(packet))
    }
}
