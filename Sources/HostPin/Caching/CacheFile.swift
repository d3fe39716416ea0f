import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A ``ResolutionCache`` saved to a file, so that a restart begins warm.
///
/// **Format, version 1**: UTF-8 JSON Lines. The first line is the header, each further line one entry,
/// least recently used first:
///
/// ```
/// {"entries":2,"format":"hostpin-cache","savedAt":1767225600.25,"version":1}
/// {"addresses":[{"address":"127.0.0.10","ttl":3600}],"cnames":[],"family":"4","kind":"addresses","name":"www.example.test","receivedAt":1767225590.5,"upstream":"127.0.0.1:53"}
/// {"addresses":[],"cnames":[],"family":"any","kind":"nxdomain","name":"nx.example.test","receivedAt":1767225591,"soa":{"expire":86400,"mailbox":"hostmaster.example.test","minimum":60,"primaryServer":"ns.example.test","refresh":3600,"retry":600,"serial":2024010101,"ttl":60,"zone":"example.test"},"upstream":"127.0.0.1:53"}
/// ```
///
/// `entries` is the number of entry lines (a file cut short at a line boundary is caught by it);
/// `savedAt` and `receivedAt` are wall-clock seconds since 1970; `family` is `4`, `6` or `any`; `kind`
/// is `addresses`, `nxdomain` or `nodata`; TTLs are seconds as received; `upstream` is as
/// ``Upstream/description`` writes it; `upstream` and `soa` are left out when there is none. `dnssec` is
/// what validation found, `secure`, `insecure` or `indeterminate` (``DNSSECStatus``), left out for an
/// answer not validated (``DNSSECMode/off``): files written before validation read as such. An entry
/// marked bogus (kept in ``DNSSECMode/report`` mode) is not saved: its reason has no line form. A later
/// version that HostPin cannot read changes `version`.
///
/// On load each entry's age is taken from its wall-clock `receivedAt`: an entry still within the
/// lifetime the cache would give it is fresh for what is left of it; a positive one past it comes back
/// expired, served stale only under the serve-stale rules (``ResolutionCache/Policy/maximumStale``); older
/// ones are dropped. The file is read whole and checked before anything is restored: a damaged, cut or
/// foreign file restores nothing.
public enum CacheFile {
    /// The `format` of the header line.
    public static let formatName = "hostpin-cache"
    /// The format version written, and the only one read.
    public static let version = 1
    /// The largest file read: 1 GiB (100 000 one-address entries take about 25 MB).
    public static let sizeLimit = 1 << 30

    /// What a load did.
    public struct LoadReport: Sendable, Hashable {
        /// Entries stored in the cache, fresh or expired (to be served stale).
        public let restored: Int
        /// Entries too old to serve even stale, or that the cache does not keep.
        public let dropped: Int
    }

    /// Writes every entry of `cache` to `path` atomically: a temporary file in the same directory (mode
    /// 0600: the names a host resolves are private) is written, flushed to disk, and renamed over `path`,
    /// so a reader sees the old file or the new one, never part of one.
    ///
    /// - Returns: The number of entries written.
    /// - Throws: ``CacheFileError/unwritable(_:)`` when the temporary file cannot be made, written or
    ///   renamed (the temporary file is removed).
    @discardableResult
    public static func save(_ cache: ResolutionCache, to path: String, now: Date = Date()) throws(CacheFileError) -> Int {
        let lines = cache.savedEntries().compactMap(Line.init)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var bytes = Data()
        do {
            bytes.append(try encoder.encode(Header(format: formatName, version: version,
                                                   savedAt: now.timeIntervalSince1970, entries: lines.count)))
            for line in lines {
                bytes.append(UInt8(ascii: "\n"))
                bytes.append(try encoder.encode(line))
            }
            bytes.append(UInt8(ascii: "\n"))
        } catch {
            throw .unwritable("encoding: \(error)")
        }
        try writeAtomically(bytes, to: path)
        return lines.count
    }

    /// Reads the cache file at `path` and stores its entries in `cache` (see the type's description
    /// for what becomes of old ones).
    ///
    /// - Parameter now: The wall-clock time entries' ages are measured to.
    /// - Throws: ``CacheFileError/unreadable(_:)`` (``FileProblem/missing`` when there is no file),
    ///   ``CacheFileError/foreign``, ``CacheFileError/unsupportedVersion(_:)`` or
    ///   ``CacheFileError/damaged(_:)``; nothing is stored then.
    public static func load(from path: String, into cache: ResolutionCache, now: Date = Date())
        throws(CacheFileError) -> LoadReport
    {
        let data: Data
        do throws(FileProblem) {
            data = try BoundedFile.contents(of: path, limit: sizeLimit)
        } catch {
            throw .unreadable(error)
        }
        let entries = try parse(data)
        var restored = 0
        for (entry, receivedAt) in entries {
            // At most 1e18 s: a receive time ages ago (-1e30) is past what UInt64 holds, and far older
            // than any entry lives anyway.
            let age = min(max(0, now.timeIntervalSince1970 - receivedAt.timeIntervalSince1970), 1e18)
            if cache.restore(entry, age: UInt64(age.rounded(.down))) { restored += 1 }
        }
        return LoadReport(restored: restored, dropped: entries.count - restored)
    }

    /// The entries of a cache file's contents, each with its receive time, checked whole.
    static func parse(_ data: Data) throws(CacheFileError) -> [(ResolutionCache.SavedEntry, Date)] {
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let decoder = JSONDecoder()
        guard let first = lines.first, let header = try? decoder.decode(Header.self, from: Data(first)),
              header.format == formatName
        else { throw .foreign }
        guard header.version == version else { throw .unsupportedVersion(header.version) }
        // Every line ends with a newline: the last split is empty.
        guard lines.count == header.entries + 2, lines.last?.isEmpty == true else {
            throw .damaged("the header announces \(header.entries) entries, the file holds \(max(0, lines.count - 2))")
        }
        var entries: [(ResolutionCache.SavedEntry, Date)] = []
        entries.reserveCapacity(header.entries)
        for (number, text) in lines.dropFirst().dropLast().enumerated() {
            let line: Line
            do {
                line = try decoder.decode(Line.self, from: Data(text))
            } catch {
                throw .damaged("line \(number + 2) is not an entry")
            }
            guard let entry = line.entry else { throw .damaged("line \(number + 2) holds an impossible entry") }
            entries.append((entry, Date(timeIntervalSince1970: line.receivedAt)))
        }
        return entries
    }

    /// Writes `bytes` to a temporary file beside `path`, flushes it, and renames it to `path`.
    private static func writeAtomically(_ bytes: Data, to path: String) throws(CacheFileError) {
        let temporary = path + ".tmp-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw .unwritable("\(temporary): \(String(cString: strerror(errno)))") }
        var failure: String?
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = "writing \(temporary): \(String(cString: strerror(errno)))"
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = "flushing \(temporary): \(String(cString: strerror(errno)))" }
        if close(descriptor) != 0, failure == nil { failure = "closing \(temporary): \(String(cString: strerror(errno)))" }
        if failure == nil, rename(temporary, path) != 0 {
            failure = "renaming \(temporary) to \(path): \(String(cString: strerror(errno)))"
        }
        if let failure {
            unlink(temporary)
            throw .unwritable(failure)
        }
    }

    // MARK: The lines

    private struct Header: Codable {
        let format: String
        let version: Int
        let savedAt: Double
        let entries: Int
    }

    private struct Line: Codable {
        struct Address: Codable {
            let address: String
            let ttl: UInt32
        }

        struct CNAME: Codable {
            let alias: String
            let target: String
            let ttl: UInt32
        }

        struct SOA: Codable {
            let zone: String
            let ttl: UInt32
            let primaryServer: String
            let mailbox: String
            let serial: UInt32
            let refresh: UInt32
            let retry: UInt32
            let expire: UInt32
            let minimum: UInt32
        }

        let name: String
        let family: String
        let kind: String
        let receivedAt: Double
        let upstream: String?
        let addresses: [Address]
        let cnames: [CNAME]
        let soa: SOA?
        let dnssec: String?

        /// The line of `entry`; `nil` for one marked bogus.
        init?(_ entry: ResolutionCache.SavedEntry) {
            family = entry.family.description
            let status: DNSSECStatus?
            switch entry.answer {
            case .addresses(let resolution): status = resolution.dnssec
            case .negative(let negative): status = negative.dnssec
            }
            switch status {
            case nil: dnssec = nil
            case .secure, .insecure, .indeterminate: dnssec = status?.description
            case .bogus: return nil
            }
            switch entry.answer {
            case .addresses(let resolution):
                name = resolution.name.text
                kind = "addresses"
                receivedAt = resolution.receivedAt.timeIntervalSince1970
                upstream = resolution.upstream?.description
                addresses = resolution.addresses.map { Address(address: $0.address.description, ttl: $0.ttl) }
                cnames = resolution.cnames.map { CNAME(alias: $0.alias, target: $0.target, ttl: $0.ttl) }
                soa = nil
            case .negative(let negative):
                name = negative.name.text
                kind = negative.kind.rawValue
                receivedAt = negative.receivedAt.timeIntervalSince1970
                upstream = negative.upstream?.description
                addresses = []
                cnames = negative.cnames.map { CNAME(alias: $0.alias, target: $0.target, ttl: $0.ttl) }
                soa = negative.soa.map {
                    SOA(zone: $0.zone, ttl: $0.ttl, primaryServer: $0.primaryServer, mailbox: $0.mailbox,
                        serial: $0.serial, refresh: $0.refresh, retry: $0.retry, expire: $0.expire, minimum: $0.minimum)
                }
            }
        }

        /// The entry, or `nil` when a field holds what no cache entry can: a name that is not normalised,
        /// an unknown family or kind, a bad address or upstream, addresses missing or out of place, a
        /// receive time that is not a number.
        var entry: ResolutionCache.SavedEntry? {
            guard let host = try? HostName.parse(name), host.text == name, host.literalAddress == nil,
                  let family = AddressFamily(family), receivedAt.isFinite
            else { return nil }
            var server: Upstream?
            if let upstream {
                guard let parsed = Upstream(upstream) else { return nil }
                server = parsed
            }
            let status: DNSSECStatus?
            switch dnssec {
            case nil: status = nil
            case DNSSECStatus.secure.description: status = .secure
            case DNSSECStatus.insecure.description: status = .insecure
            case DNSSECStatus.indeterminate.description: status = .indeterminate
            default: return nil
            }
            let receivedAt = Date(timeIntervalSince1970: receivedAt)
            let chain = cnames.map { CNAMERecord(alias: $0.alias, target: $0.target, ttl: $0.ttl) }
            switch kind {
            case "addresses":
                guard soa == nil, !addresses.isEmpty else { return nil }
                var resolved: [ResolvedAddress] = []
                for address in addresses {
                    guard let ip = IPAddress(address.address), family.admits(ip.family) else { return nil }
                    resolved.append(ResolvedAddress(address: ip, ttl: address.ttl))
                }
                let resolution = Resolution(name: host, addresses: resolved, cnames: chain, upstream: server,
                                            source: .cache, receivedAt: receivedAt, dnssec: status)
                return ResolutionCache.SavedEntry(answer: .addresses(resolution), family: family)
            case NegativeAnswer.Kind.nxdomain.rawValue, NegativeAnswer.Kind.nodata.rawValue:
                guard addresses.isEmpty, let negativeKind = NegativeAnswer.Kind(rawValue: kind) else { return nil }
                let record = soa.map {
                    SOARecord(zone: $0.zone, ttl: $0.ttl, primaryServer: $0.primaryServer, mailbox: $0.mailbox,
                              serial: $0.serial, refresh: $0.refresh, retry: $0.retry, expire: $0.expire, minimum: $0.minimum)
                }
                let negative = NegativeAnswer(name: host, family: family, kind: negativeKind, cnames: chain, soa: record,
                                              upstream: server, source: .negativeCache, receivedAt: receivedAt,
                                              dnssec: status)
                return ResolutionCache.SavedEntry(answer: .negative(negative), family: family)
            default:
                return nil
            }
        }
    }
}
