/// Why a cache file could not be read or written (``CacheFile``).
public enum CacheFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file cannot be read: missing, not a regular file, too large, no permission.
    case unreadable(FileProblem)
    /// The file is not a HostPin cache file: not JSON, or JSON without the format marker.
    case foreign
    /// The file is a HostPin cache file of a format version this HostPin does not read.
    case unsupportedVersion(Int)
    /// The file is a HostPin cache file that is damaged or cut short: the reason.
    case damaged(String)
    /// The file could not be written: the step and the C library's reason.
    case unwritable(String)

    public var description: String {
        switch self {
        case .unreadable(let problem): "the cache file cannot be used: \(problem)"
        case .foreign: "the file is not a HostPin cache file"
        case .unsupportedVersion(let version):
            "the cache file has format version \(version); this HostPin reads version \(CacheFile.version)"
        case .damaged(let reason): "the cache file is damaged or cut short (\(reason))"
        case .unwritable(let reason): "the cache file cannot be written: \(reason)"
        }
    }
}
