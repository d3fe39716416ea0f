/// The bytes libFuzzer hands `LLVMFuzzerTestOneInput`, copied into an array (the pointer is only valid
/// during the call and may be null when the input is empty).
public func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    Array(UnsafeBufferPointer(start: data, count: size))
}

/// `bytes` cut at the first `separator`: the part before it and the rest (empty when there is none).
public func split(_ bytes: [UInt8], at separator: UInt8) -> (head: ArraySlice<UInt8>, rest: ArraySlice<UInt8>) {
    guard let index = bytes.firstIndex(of: separator) else { return (bytes[...], []) }
    return (bytes[..<index], bytes[(index + 1)...])
}
