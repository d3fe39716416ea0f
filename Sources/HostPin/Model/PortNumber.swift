extension UInt16 {
    /// A TCP or UDP port written as HostPin reads one everywhere: decimal ASCII digits only, 1-65535.
    /// `UInt16(_:)` alone takes a sign (`"+6379"`), which no URL or `HOST:PORT` allows (RFC 3986 §3.2.3:
    /// `port = *DIGIT`).
    ///
    /// - Returns: `nil` for an empty text, a sign, a non-ASCII digit, more than five digits, 0 or a
    ///   value above 65535.
    package init?<Text: StringProtocol>(port text: Text) {
        guard !text.isEmpty, text.utf8.count <= 5, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let value = UInt16(text, radix: 10), value > 0 else { return nil }
        self = value
    }
}
