@testable import HostPinProxy
import Testing

/// The chunked decoder: framing errors named exactly, and any split of the input decodes the same.
@Suite struct ChunkedDecoderTests {
    /// Feeds `text` in pieces of `step` bytes and returns the data and trailers, or throws.
    static func decode(_ text: String, step: Int = .max) throws(ChunkError) -> (data: String, trailers: [String], rest: String) {
        var decoder = ChunkedDecoder(maximumSizeLineBytes: 32, maximumTrailerBytes: 64)
        let bytes = Array(text.utf8)
        var data: [UInt8] = []
        var trailers: [String] = []
        var offset = 0
        while offset < bytes.count, !decoder.isComplete {
            let end = min(bytes.count, offset + min(step, bytes.count))
            let (events, consumed) = try decoder.feed(bytes[offset..<end])
            for event in events {
                switch event {
                case .data(let slice): data.append(contentsOf: slice)
                case .end(let fields): trailers = fields.map { "\($0.name)=\($0.value)" }
                }
            }
            offset += consumed
            if consumed < end - offset + consumed { break }
        }
        if !decoder.isComplete { throw .truncated }
        return (String(decoding: data, as: UTF8.self), trailers, String(decoding: bytes[offset...], as: UTF8.self))
    }

    @Test(arguments: [1, 2, 3, 7, 1000])
    func decodesInAnySplit(step: Int) throws {
        let result = try Self.decode("5 ; a ; b = c\r\nhello\r\n6;name=\"v \\\" ;\"\r\n world\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\nNEXT", step: step)
        #expect(result.data == "hello world0123456789")
        #expect(result.trailers == ["X-T=1"])
        #expect(result.rest == "NEXT")
    }

    @Test(arguments: [
        ("g\r\nx\r\n0\r\n\r\n", ChunkError.invalidChunkSize("g")),
        ("\r\n0\r\n\r\n", .invalidChunkSize("")),
        ("-1\r\n0\r\n\r\n", .invalidChunkSize("-1")),
        ("0x5\r\nhello\r\n0\r\n\r\n", .invalidChunkSize("0x5")),
        ("5 \r\nhello\r\n0\r\n\r\n", .invalidChunkSize("5 ")),
        ("5 x\r\nhello\r\n0\r\n\r\n", .invalidChunkSize("5 x")),
        ("1000000000000000\r\n", .chunkSizeTooLarge("1000000000000000")),
        ("ffffffffffffffffffff\r\n", .chunkSizeTooLarge("ffffffffffffffffffff")),
        ("ffffffffffffffffffff;a=b\r\n", .chunkSizeTooLarge("ffffffffffffffffffff")),
        ("ffffffffffffffffffffg\r\n", .invalidChunkSize("ffffffffffffffffffffg")),
        ("5;a=\"b\r\nhello\r\n0\r\n\r\n", .invalidChunkExtension("5;a=\"b")),
        ("5;a=\"b\\\"\r\nhello\r\n0\r\n\r\n", .invalidChunkExtension("5;a=\"b\\\"")),
        ("5;a=\r\nhello\r\n0\r\n\r\n", .invalidChunkExtension("5;a=")),
        ("5;=b\r\nhello\r\n0\r\n\r\n", .invalidChunkExtension("5;=b")),
        ("5;a b\r\nhello\r\n0\r\n\r\n", .invalidChunkExtension("5;a b")),
        ("5;a=\"b\"c\r\nhello\r\n0\r\n\r\n", .invalidChunkExtension("5;a=\"b\"c")),
        ("5\nhello\r\n0\r\n\r\n", .bareLF),
        ("5\rhello\r\n0\r\n\r\n", .bareCR),
        ("5\r\nhelloX\r\n0\r\n\r\n", .missingCRLFAfterData),
        ("5\r\nhello\rX0\r\n\r\n", .missingCRLFAfterData),
        ("5;\(String(repeating: "e", count: 40))\r\nhello\r\n0\r\n\r\n", .sizeLineTooLong(limit: 32)),
        ("0\r\nX-T: \(String(repeating: "t", count: 80))\r\n\r\n", .trailerTooLarge(limit: 64)),
        ("0\r\nX-T : 1\r\n\r\n", .invalidTrailer(.whitespaceBeforeColon)),
        ("0\r\n folded\r\n\r\n", .invalidTrailer(.obsoleteLineFolding)),
        ("5\r\nhel", .truncated),
    ])
    func rejectsMalformedFraming(body: String, error: ChunkError) {
        #expect(throws: error) { try Self.decode(body) }
    }

    @Test func encoderRoundTrips() throws {
        let encoded = ChunkedEncoder.chunk(Array("hello".utf8)) + ChunkedEncoder.chunk([UInt8]()) + ChunkedEncoder.end(trailers: HeaderFields())
        #expect(String(decoding: encoded, as: UTF8.self) == "5\r\nhello\r\n0\r\n\r\n")
        #expect(try Self.decode(String(decoding: encoded, as: UTF8.self)).data == "hello")
    }
}
