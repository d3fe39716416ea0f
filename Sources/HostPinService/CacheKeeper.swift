import HostPin

/// Writes a cache to its file: every `period` while the command runs, and once more at ``finish()``.
/// Each write runs on a thread of its own (it blocks on the disk); a failed one is reported in one line.
package final class CacheKeeper: Sendable {
    private let cache: ResolutionCache
    private let path: String
    private let periodic: Task<Void, Never>?
    private let log: ServiceLog

    package init(cache: ResolutionCache, path: String, period: Duration?, log: ServiceLog) {
        self.cache = cache
        self.path = path
        self.log = log
        periodic = period.map { period in
            Task { [cache, path, log] in
                while (try? await Task.sleep(for: period)) != nil {
                    await Self.save(cache, to: path, log: log)
                }
            }
        }
    }

    /// Stops the periodic writes and writes the cache once more.
    package func finish() async {
        periodic?.cancel()
        await periodic?.value
        await Self.save(cache, to: path, log: log)
    }

    private static func save(_ cache: ResolutionCache, to path: String, log: ServiceLog) async {
        // The body throws nothing: `try?` only satisfies the signature.
        let failure = try? await Blocking.run { () -> CacheFileError? in
            do throws(CacheFileError) {
                try CacheFile.save(cache, to: path)
                return nil
            } catch {
                return error
            }
        }
        if let failure { log.error("hostpin: \(path): \(failure)") }
    }
}
