import FuzzSupport
@testable import HostPinProxy

/// What decoding a body gave: its data, trailers, how many bytes belonged to it, or the error.
struct Decoded: Equatable {
    var data: [UInt8] = []
    var trailers: HeaderFields?
    var consumed = 0
    var error: ChunkError?
}

/// Decodes `bytes` fed in pieces of `step` bytes, as they would arrive from a socket.
func decode(_ bytes: [UInt8], step: Int, decoder: ChunkedDecoder = ChunkedDecoder()) -> Decoded {
    var decoder = decoder
    var result = Decoded()
    var offset = 0
    while offset < bytes.count, !decoder.isComplete {
        let end = min(bytes.count, offset + step)
        do {
            let (events, consumed) = try decoder.feed(bytes[offset..<end])
            for event in events {
                switch event {
                case .data(let slice): result.data.append(contentsOf: slice)
                case .end(let trailers): result.trailers = trailers
                }
            }
            offset += consumed  // less than the piece only when the body ended: the loop stops
            result.consumed = offset
        } catch {
            result.error = error
            return result
        }
    }
    return result
}

/// The proxy's chunked decoder (bodies from clients and origins) on any bytes: never a crash; the same
/// data, trailers, end and error however the bytes are split; and a body it reads whole, encoded again
/// by `ChunkedEncoder` (as the proxy sends it on), decodes to the same data and trailers.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzChunked(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    let whole = decode(bytes, step: max(bytes.count, 1))
    for step in [1, 2, 7] {
        let split = decode(bytes, step: step)
        if whole.error != nil || split.error != nil {
            property(split.error == whole.error,
                     "fed \(step) at a time, \(text(bytes)) fails with \(String(describing: split.error)), whole with \(String(describing: whole.error))")
        } else {
            property(split == whole, "fed \(step) at a time, \(text(bytes)) decodes to \(split), whole to \(whole)")
        }
    }
    guard whole.error == nil, let trailers = whole.trailers else { return 0 }
    let encoded = ChunkedEncoder.chunk(whole.data) + ChunkedEncoder.end(trailers: trailers)
    // Trailer values written again may be longer than read (`X:1` becomes `X: 1`): limits are not checked.
    let again = decode(encoded, step: encoded.count, decoder: ChunkedDecoder(maximumTrailerBytes: .max / 2))
    property(again.error == nil && again.data == whole.data && again.trailers == trailers && again.consumed == encoded.count,
             "\(text(bytes)) decodes to \(whole), encoded again as \(text(encoded)) to \(again)")
    return 0
}

/// Bytes as a quoted string, for messages.
func text(_ bytes: some Collection<UInt8>) -> String {
    String(decoding: bytes.prefix(512), as: UTF8.self).debugDescription
}
