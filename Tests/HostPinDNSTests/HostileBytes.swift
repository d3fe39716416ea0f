/// Hand-made and random DNS messages that a stub must survive: the bad-input set of the server tests.
enum HostileBytes {
    /// A header (RFC 1035 §4.1.1) with ID 0xBEEF, RD set, and the given counts, then `body`.
    static func message(qdcount: UInt16 = 1, ancount: UInt16 = 0, arcount: UInt16 = 0, flags: UInt16 = 0x0100,
                        body: [UInt8]) -> [UInt8] {
        [0xBE, 0xEF, UInt8(flags >> 8), UInt8(flags & 0xFF), UInt8(qdcount >> 8), UInt8(qdcount & 0xFF),
         UInt8(ancount >> 8), UInt8(ancount & 0xFF), 0, 0, UInt8(arcount >> 8), UInt8(arcount & 0xFF)] + body
    }

    /// QTYPE A, QCLASS IN.
    static let typeAClassIN: [UInt8] = [0, 1, 0, 1]

    /// `labels` in wire form, ending with the root label.
    static func name(_ labels: [[UInt8]]) -> [UInt8] {
        labels.flatMap { [UInt8($0.count)] + $0 } + [0]
    }

    static func label(_ length: Int) -> [UInt8] {
        [UInt8](repeating: UInt8(ascii: "a"), count: length)
    }

    /// A question whose label is 64 octets long (the length octet's top bits are then 01: no label).
    static let label64 = message(body: name([label(64), Array("test".utf8)]) + typeAClassIN)
    /// A name of 255 octets in wire form, the most RFC 1035 §2.3.4 allows.
    static let name255 = message(body: name([label(63), label(63), label(63), label(61)]) + typeAClassIN)
    /// A name of 256 octets in wire form.
    static let name256 = message(body: name([label(63), label(63), label(63), label(62)]) + typeAClassIN)
    /// A question name that is a compression pointer to itself (offset 12).
    static let pointerLoop = message(body: [0xC0, 12] + typeAClassIN)
    /// Two pointers pointing at each other.
    static let pointerPingPong = message(body: [0xC0, 14, 0xC0, 12] + typeAClassIN)
    /// A pointer past the end of the message.
    static let pointerPastEnd = message(body: [0xC0, 200] + typeAClassIN)
    /// A pointer forward, to `www.example.test` stored after the question (RFC 1035 §4.1.4 wants
    /// pointers to earlier names; reading it anyway is harmless).
    static let forwardPointer = message(body: [0xC0, 18] + typeAClassIN
        + name([Array("www".utf8), Array("example".utf8), Array("test".utf8)]))
    /// QDCOUNT 0.
    static let noQuestion = message(qdcount: 0, body: [])
    /// QDCOUNT 65 535, with one question present.
    static let manyQuestions = message(qdcount: 65_535, body: name([Array("www".utf8), Array("example".utf8), Array("test".utf8)]) + typeAClassIN)
    /// QDCOUNT 2, both present.
    static let twoQuestions = message(qdcount: 2, body: (0..<2).flatMap { _ in
        name([Array("www".utf8), Array("example".utf8), Array("test".utf8)]) + typeAClassIN
    })
    /// ANCOUNT 65 535 and no record.
    static let missingAnswers = message(ancount: 65_535, body: name([Array("www".utf8), Array("example".utf8), Array("test".utf8)]) + typeAClassIN)

    /// An OPT record (RFC 6891 §6.1.2): the root as owner, TYPE 41, the UDP payload size as CLASS, TTL 0
    /// (no extended RCODE, version 0, DO clear), no options.
    static func opt(udpPayloadSize: UInt16) -> [UInt8] {
        [0, 0, 41, UInt8(udpPayloadSize >> 8), UInt8(udpPayloadSize & 0xFF), 0, 0, 0, 0, 0, 0]
    }

    /// A query for `www.example.test` A with `count` OPT records (sizes 1232, 1233, …) in its additional
    /// section; more than one is a format error (RFC 6891 §6.1.1).
    static func optRecords(_ count: UInt16) -> [UInt8] {
        message(arcount: count, body: name([Array("www".utf8), Array("example".utf8), Array("test".utf8)]) + typeAClassIN
            + (0..<count).flatMap { opt(udpPayloadSize: 1232 + $0) })
    }

    /// Every hand-made message above that has a readable header, with a name for test output.
    static let named: KeyValuePairs<String, [UInt8]> = [
        "label of 64 octets": label64, "name of 256 octets": name256, "pointer loop": pointerLoop,
        "pointer ping-pong": pointerPingPong, "pointer past the end": pointerPastEnd, "QDCOUNT 0": noQuestion,
        "QDCOUNT 65535": manyQuestions, "QDCOUNT 2": twoQuestions, "ANCOUNT 65535": missingAnswers,
    ]

    /// The message of ``named`` called `name`.
    static func named(_ name: String) -> [UInt8] {
        named.first { $0.key == name }!.value
    }

    /// `count` random messages of 0 to 600 octets, the same for the same `seed`.
    static func random(count: Int, seed: UInt64) -> [[UInt8]] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let length = Int.random(in: 0...600, using: &generator)
            // Eight octets per draw: one draw per octet made 20 000 messages cost 15 s of CPU in a debug
            // build, time that one of the cooperative pool's 2 threads spent away from every other test.
            var bytes: [UInt8] = []
            bytes.reserveCapacity(length + 7)
            while bytes.count < length { withUnsafeBytes(of: generator.next()) { bytes.append(contentsOf: $0) } }
            bytes.removeLast(bytes.count - length)
            // Half of them look like queries (QR clear, QDCOUNT 1), so parsing gets past the header.
            if length >= 12, Bool.random(using: &generator) {
                bytes[2] &= 0x7F
                bytes[4] = 0
                bytes[5] = 1
            }
            return bytes
        }
    }
}

/// A seeded random number generator (SplitMix64), so a failing input can be found again.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
