import HostPin
import HostPinNet
import HostPinService

/// The option groups `serve` and `proxy` both take after their own options, parsed in one place and in
/// one order: the upstreams, the cache, (`serve`: the watch,) the metrics endpoint, the control socket,
/// the logs; then the parse is finished.
struct ServiceOptionGroups {
    /// `--no-network-watch`'s help entry, for `serve` and `proxy` (descriptions from column `width` + 2).
    static func networkWatchHelpLines(width: Int) -> String {
        let indent = String(repeating: " ", count: width + 2)
        return "  " + "--no-network-watch".padding(toLength: width, withPad: " ", startingAt: 0)
            + "Do not watch the network (rtnetlink). By default a change of address,\n"
            + indent + "link or default route closes kept connections, ends hold-downs, drops\n"
            + indent + "negative and stale answers and refreshes the names in use."
    }

    let trusted: TrustedOptions
    let cache: CacheOptions
    /// `--shared-cache` and its files; `nil` without it.
    let sharedCache: SharedCacheOptions?
    /// `--watch-local` and its options; `nil` without it, or for `proxy`.
    let watch: WatchOptions?
    let metrics: MetricsOptions
    let controlSocket: String?
    let log: LogOptions
    /// Not `--no-network-watch`.
    let networkWatch: Bool

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
        networkWatch = try !parser.flag("--no-network-watch")
        try parser.finish()
    }
}
