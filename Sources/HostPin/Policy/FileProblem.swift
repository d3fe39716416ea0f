/// Why a file named in the rules (the rules file itself, or a `respond` rule's `file`) cannot be used.
public enum FileProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing exists at the path.
    case missing
    /// The path names a directory, a device, a FIFO or a socket.
    case notARegularFile
    /// The file is larger than `limit` bytes; it was not read.
    case tooLarge(limit: Int)
    /// Opening or reading failed; the C library's reason (`Permission denied`, `Too many levels of symbolic links`).
    case unreadable(String)

    public var description: String {
        switch self {
        case .missing: "it does not exist"
        case .notARegularFile: "it is not a regular file (a directory, device, FIFO or socket)"
        case .tooLarge(let limit): "it is larger than \(limit / (1 << 20)) MiB (\(limit) bytes)"
        case .unreadable(let reason): "it cannot be read (\(reason))"
        }
    }
}
