import Foundation
@testable import HostPin
import Testing

/// The cache file: saved atomically, loaded back with each entry's age taken from its wall-clock receive
/// time, and refused whole when damaged, cut short or foreign. No network.
@Suite struct CacheFileTests {
    let directory: URL
    let path: String
    let received = Date(timeIntervalSince1970: 1_767_225_600.25)
    let upstream = Upstream("127.0.0.1:53")

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-cachefile-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("cache.jsonl").path
    }

    func www(ttl: UInt32 = 3600) throws -> Resolution {
        Resolution(name: try HostName.parse("alias.example.test"),
                   addresses: [ResolvedAddress(address: try #require(IPAddress("127.0.0.10")), ttl: ttl),
                               ResolvedAddress(address: try #require(IPAddress("::1")), ttl: ttl)],
                   cnames: [CNAMERecord(alias: "alias.example.test", target: "www.example.test", ttl: ttl)],
                   upstream: upstream, source: .upstream, receivedAt: received)
    }

    func nx() throws -> NegativeAnswer {
        NegativeAnswer(name: try HostName.parse("nx.example.test"), family: .v4, kind: .nxdomain, cnames: [],
                       soa: SOARecord(zone: "example.test", ttl: 60, primaryServer: "ns.example.test",
                                      mailbox: "hostmaster.example.test", serial: 2024010101, refresh: 3600, retry: 600,
                                      expire: 86400, minimum: 60),
                       upstream: upstream, source: .upstream, receivedAt: received)
    }

    /// A cache holding `www` for `any` and `nx` for v4, saved to ``path``.
    func savedCache() throws -> ResolutionCache {
        let cache = ResolutionCache(clock: ManualClock())
        cache.store(try www(), family: .any)
        cache.store(try nx())
        #expect(try CacheFile.save(cache, to: path, now: received) == 2)
        return cache
    }

    @Test func savedEntriesComeBackFreshForWhatIsLeftOfTheirTTL() throws {
        _ = try savedCache()
        let cache = ResolutionCache(clock: ManualClock())
        let report = try CacheFile.load(from: path, into: cache, now: received.addingTimeInterval(30.9))
        #expect(report == CacheFile.LoadReport(restored: 2, dropped: 0))
        let positive = try #require(cache.lookupDetailed(try HostName.parse("alias.example.test"), family: .any))
        #expect(positive.answer == .addresses(try www().from(.cache)))
        #expect(positive.ttlLeft == 3570)
        #expect(positive.age == 30)
        let negative = try #require(cache.lookupDetailed(try HostName.parse("nx.example.test"), family: .v4))
        #expect(negative.answer == .negative(try nx().from(.negativeCache)))
        #expect(negative.ttlLeft == 30)
    }

    @Test func entryPastItsTTLComesBackStaleOnlyWithinTheMaximumStaleAge() throws {
        _ = try savedCache()
        let clock = ManualClock()
        let cache = ResolutionCache(policy: .init(maximumStale: 600), clock: clock)
        // 3600 s + 599 s later: the addresses are 599 s stale, the NXDOMAIN long expired.
        let report = try CacheFile.load(from: path, into: cache, now: received.addingTimeInterval(4199))
        #expect(report == CacheFile.LoadReport(restored: 1, dropped: 1))
        let name = try HostName.parse("alias.example.test")
        #expect(cache.lookup(name, family: .any) == nil)  // not fresh
        guard case .expired(let entry) = cache.find(name, family: .any, now: clock.nanoseconds()) else {
            Issue.record("the expired entry was not kept to be served stale")
            return
        }
        #expect(cache.staleOutcome(of: entry)?.resolution?.addresses.map(\.ttl) == [30, 30])
        clock.advance(by: .seconds(1))
        guard case .removed = cache.find(name, family: .any, now: clock.nanoseconds()) else {
            Issue.record("the entry outlived the maximum stale age")
            return
        }

        let tooOld = ResolutionCache(policy: .init(maximumStale: 600), clock: ManualClock())
        #expect(try CacheFile.load(from: path, into: tooOld, now: received.addingTimeInterval(4200)).restored == 0)
    }

    @Test func fileIsReplacedWholeAndReadableOnlyByItsOwner() throws {
        let cache = try savedCache()
        cache.remove(try HostName.parse("nx.example.test"))
        #expect(try CacheFile.save(cache, to: path) == 1)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["cache.jsonl"])
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix(#"{"entries":1,"format":"hostpin-cache","#) == true)
    }

    static let badFiles: [(String, String)] = [
        ("not JSON", "hello\n"),
        ("another program's JSON", #"{"format":"other","version":1,"savedAt":0,"entries":0}"# + "\n"),
        ("empty", ""),
    ]

    @Test(arguments: badFiles)
    func foreignFileIsRefused(label: String, text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: CacheFileError.foreign, "\(label)") {
            try CacheFile.load(from: path, into: ResolutionCache(clock: ManualClock()))
        }
    }

    @Test func laterVersionIsRefused() throws {
        try Data((#"{"entries":0,"format":"hostpin-cache","savedAt":0,"version":2}"# + "\n").utf8)
            .write(to: URL(fileURLWithPath: path))
        #expect(throws: CacheFileError.unsupportedVersion(2)) {
            try CacheFile.load(from: path, into: ResolutionCache(clock: ManualClock()))
        }
    }

    @Test func fileCutShortAnywhereRestoresNothing() throws {
        _ = try savedCache()
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        let header = try #require(whole.firstIndex(of: UInt8(ascii: "\n")))
        for length in stride(from: header + 1, to: whole.count, by: 7) {
            try whole.prefix(length).write(to: URL(fileURLWithPath: path))
            let cache = ResolutionCache(clock: ManualClock())
            do throws(CacheFileError) {
                _ = try CacheFile.load(from: path, into: cache, now: received)
                Issue.record("a file cut to \(length) of \(whole.count) bytes was read")
            } catch {
                guard case .damaged = error else {
                    Issue.record("cut to \(length): \(error)")
                    continue
                }
            }
            #expect(cache.count == 0)
        }
    }

    @Test(arguments: [
        (#""name":"nx.example.test""#, #""name":"NX.example.test""#),
        (#""family":"4""#, #""family":"5""#),
        (#""kind":"nxdomain""#, #""kind":"servfail""#),
        (#""address":"127.0.0.10""#, #""address":"127.0.0.300""#),
        (#""upstream":"127.0.0.1:53""#, #""upstream":"nowhere""#),
    ])
    func entryWithAnImpossibleFieldMakesTheFileDamaged(original: String, replacement: String) throws {
        _ = try savedCache()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let changed = text.replacingOccurrences(of: original, with: replacement, options: [], range: text.range(of: original))
        #expect(changed != text)
        try Data(changed.utf8).write(to: URL(fileURLWithPath: path))
        let cache = ResolutionCache(clock: ManualClock())
        #expect(throws: CacheFileError.self) { try CacheFile.load(from: path, into: cache, now: received) }
        #expect(cache.count == 0)
    }

    /// A receive time ages before now (a hand-edited or foreign file: `-1e30`) is an entry too old to
    /// serve, dropped like any other; its age in seconds is more than the cache counts in 64 bits.
    @Test func entryReceivedAgesAgoIsDropped() throws {
        _ = try savedCache()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let changed = text.replacingOccurrences(of: #""receivedAt":1767225600.25"#, with: #""receivedAt":-1e30"#)
        #expect(changed != text)
        try Data(changed.utf8).write(to: URL(fileURLWithPath: path))
        let cache = ResolutionCache(clock: ManualClock())
        #expect(try CacheFile.load(from: path, into: cache, now: received) == CacheFile.LoadReport(restored: 0, dropped: 2))
        #expect(cache.count == 0)
    }

    @Test func missingFileIsUnreadable() {
        #expect(throws: CacheFileError.unreadable(.missing)) {
            try CacheFile.load(from: path + ".none", into: ResolutionCache(clock: ManualClock()))
        }
    }
}
