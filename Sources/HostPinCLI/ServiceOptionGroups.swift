import HostPin
import HostPinNet
import HostPinService

/// The option groups `serve` and `proxy` both take after their own options, parsed in one place and in
/// one order: the upstreams, the cache, (`serve`: the watch,) the metrics endpoint, the control socket,
/// the logs; then the parse is finished.
struct ServiceOptionGroups {
    let trusted: TrustedOptions
    let cache: CacheOptions
    /// `--shared-cache` and its files; `nil` without it.
    let sharedCache: SharedCacheOptions?
    /// `--watch-local` and its options; `nil` without it, or for `proxy`.
    let watch: WatchOptions?
    let metrics: MetricsOptions
    let controlSocket: String?
    let log: LogOptions

    /// Takes the groups from `parser` and finishes it.
    ///
    /// - Parameters:
    ///   - allowRemote: The command's `--allow-remote` (for the metrics endpoint's address).
    ///   - watchBeside: `serve`'s DNS addresses, which the watched resolver must not be; `nil` takes no
    ///     watch options (`proxy`: they are unknown options there).
    init(parsing parser: inout OptionParser, allowRemote: Bool, watchBeside: [SocketAddress]?) throws(UsageError) {
        trusted = try TrustedOptions(parsing: &parser)
        cache = try CacheOptions(parsing: &parser, acceptsPreresolve: true)
        sharedCache = try SharedCacheOptions.parse(&parser)
        watch = try watchBeside.flatMap { addresses throws(UsageError) in try WatchOptions.parse(&parser, listening: addresses) }
        metrics = try MetricsOptions(parsing: &parser, allowRemote: allowRemote)
        controlSocket = try ControlSocketPath.option(&parser)
        log = try LogOptions(parsing: &parser)
        try parser.finish()
    }
}
