import Foundation
import FuzzSupport
@testable import HostPin

/// Where the input is written for `CacheFile.load` to read, and where the cache is saved again: a
/// folder of this process's own, in memory when /dev/shm is there.
let folder: URL = {
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? URL(fileURLWithPath: "/dev/shm")
        : FileManager.default.temporaryDirectory
    let folder = base.appendingPathComponent("hostpin-fuzz-cache-file-\(getpid())")
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}()
let input = folder.appendingPathComponent("input.jsonl")
let saved = folder.appendingPathComponent("saved.jsonl")

/// The wall-clock time of every load: the seeds' entries were received shortly before it.
let now = Date(timeIntervalSince1970: 1_767_225_700)

/// A clock that never moves.
struct FrozenClock: MonotonicClock {
    func nanoseconds() -> UInt64 { 1_000_000_000_000 }
}

/// The cache file reader on any file: `CacheFile.load(from:into:now:)` (`hostpin serve --cache-file` at
/// start, `lookup --cache-file`). Never a crash, and:
/// - a file it refuses is a `CacheFileError` other than `unreadable` (the file is there) and restores
///   nothing;
/// - a file it reads restores at most its entries and counts each restored or dropped;
/// - the cache it fills, saved (`CacheFile.save`) and loaded again at the same time, holds the same
///   entries (receive times but for a `Date`'s rounding: it keeps them since 2001, not since 1970).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCacheFile(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Data(fuzzInput(data, size))
    guard FileManager.default.createFile(atPath: input.path, contents: bytes) else {
        fatalError("cannot write \(input.path)")
    }
    let cache = ResolutionCache(clock: FrozenClock())
    let report: CacheFile.LoadReport
    do throws(CacheFileError) {
        report = try CacheFile.load(from: input.path, into: cache, now: now)
    } catch {
        if case .unreadable = error { property(false, "a file of \(bytes.count) bytes is unreadable: \(error)") }
        property(cache.count == 0, "a refused file (\(error)) restored \(cache.count) entries")
        _ = error.description
        return 0
    }
    let entries = (try? CacheFile.parse(bytes))?.count ?? -1
    property(report.restored + report.dropped == entries && cache.count <= report.restored,
             "\(entries) entries: \(report.restored) restored, \(report.dropped) dropped, \(cache.count) kept")
    let kept = cache.savedEntries()
    do throws(CacheFileError) {
        let written = try CacheFile.save(cache, to: saved.path, now: now)
        property(written == kept.count, "\(kept.count) entries saved as \(written)")
        let again = ResolutionCache(clock: FrozenClock())
        let reread = try CacheFile.load(from: saved.path, into: again, now: now)
        property(reread.restored == kept.count && reread.dropped == 0,
                 "\(kept.count) entries saved come back \(reread.restored) restored, \(reread.dropped) dropped")
        let before = Dictionary(kept.map(summary), uniquingKeysWith: { $1 })
        let after = Dictionary(again.savedEntries().map(summary), uniquingKeysWith: { $1 })
        property(before.count == kept.count && before.keys.sorted() == after.keys.sorted()
                 && before.allSatisfy { entry, time in after[entry].map { close(time, $0) } == true },
                 "saved and loaded again, \(before) come back as \(after)")
    } catch {
        property(false, "the cache loaded from \(String(decoding: bytes.prefix(2000), as: UTF8.self).debugDescription) cannot be saved and loaded again: \(error)")
    }
    return 0
}

/// An entry as text (one per name and family in a cache), and its receive time.
func summary(_ entry: ResolutionCache.SavedEntry) -> (String, Double) {
    switch entry.answer {
    case .addresses(let resolution):
        return ("\(entry.family) \(resolution.name.text) \(resolution.addresses) \(resolution.cnames) "
                + "\(resolution.upstream?.description ?? "-") \(resolution.source)", resolution.receivedAt.timeIntervalSince1970)
    case .negative(let negative):
        return ("\(entry.family) \(negative.name.text) \(negative.kind) \(negative.cnames) \(String(describing: negative.soa)) "
                + "\(negative.upstream?.description ?? "-") \(negative.source)", negative.receivedAt.timeIntervalSince1970)
    }
}

/// Whether two receive times are the same but for a `Date`'s rounding (it keeps seconds since 2001, so
/// seconds since 1970 may come back a few units in the last place apart).
func close(_ a: Double, _ b: Double) -> Bool {
    a == b || abs(a - b) <= max(1e-6, max(abs(a), abs(b)) * 1e-12)
}
