/// Size limits on a message head, checked while its bytes arrive so an endless head costs bounded memory.
public struct HeadLimits: Sendable, Hashable {
    /// The longest request or status line, CRLF excluded, in bytes. Default: 8 KiB (RFC 9112 §3 suggests
    /// at least 8000 octets).
    public var maximumStartLineBytes: Int = 8192
    /// The longest field line, CRLF excluded, in bytes. Default: 8 KiB.
    public var maximumFieldLineBytes: Int = 8192
    /// The most field lines. Default: 100.
    public var maximumFieldCount: Int = 100
    /// The largest head, start line to the empty line inclusive, in bytes. Default: 64 KiB.
    public var maximumHeadBytes: Int = 65_536

    /// The defaults above.
    public init() {}
}
