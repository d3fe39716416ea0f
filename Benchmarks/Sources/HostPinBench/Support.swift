#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import HostPin

/// Monotonic nanoseconds (`CLOCK_MONOTONIC`).
@inline(__always)
func nowNanoseconds() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
}

/// CPU time of the calling thread, nanoseconds (`CLOCK_THREAD_CPUTIME_ID`).
func threadCPUNanoseconds() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
}

/// User + system CPU time of this process, in microseconds (`getrusage(RUSAGE_SELF)`).
func cpuMicroseconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let user = Double(usage.ru_utime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec)
    let system = Double(usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_stime.tv_usec)
    return user + system
}

/// A field of `/proc/self/status` in KiB (`VmRSS`, `VmHWM`, …).
func procStatusKiB(_ field: String) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return .nan }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        let number = line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? ""
        return Double(number) ?? .nan
    }
    return .nan
}

/// Prints one measurement for `Benchmarks/run` to collect: `RESULT <id> <value>`.
func report(_ id: String, _ value: Double) {
    FileHandle.standardOutput.write(Data("RESULT \(id) \(String(format: "%.3f", value))\n".utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("HostPinBench: \(message)\n".utf8))
    exit(1)
}

/// `--name value` options after the subcommand.
struct Options {
    private var values: [String: String] = [:]

    init(_ arguments: ArraySlice<String>) {
        var iterator = arguments.makeIterator()
        while let key = iterator.next() {
            guard key.hasPrefix("--") else { fail("unexpected argument '\(key)'") }
            values[String(key.dropFirst(2))] = iterator.next() ?? ""
        }
    }

    func string(_ key: String, _ fallback: String? = nil) -> String {
        guard let value = values[key] ?? fallback else { fail("missing --\(key)") }
        return value
    }

    func int(_ key: String, _ fallback: Int) -> Int {
        guard let text = values[key] else { return fallback }
        guard let value = Int(text) else { fail("--\(key) wants an integer") }
        return value
    }

    func double(_ key: String, _ fallback: Double) -> Double {
        guard let text = values[key] else { return fallback }
        guard let value = Double(text) else { fail("--\(key) wants a number") }
        return value
    }
}

/// The p-th percentile (0...100) of sorted values, nearest rank.
func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

/// Keeps the optimiser from dropping work whose result is otherwise unused.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// A small fast PRNG (xorshift64*), so random keys cost nanoseconds, not a SystemRandomNumberGenerator call.
struct XorShift {
    var state: UInt64
    @inline(__always)
    mutating func next(below bound: Int) -> Int {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        let r = state &* 2_685_821_657_736_338_717
        return Int((r >> 32) % UInt64(bound))
    }
}

/// Names `n000000.bench.test` … as the generated zone has them.
func benchName(_ i: Int) -> String {
    let digits = String(i)
    return "n" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits + ".bench.test"
}

/// A resolver that answers every name at once with one A record (TTL one hour), for filling caches.
struct StubResolver: HostResolver {
    let upstream = Upstream("127.0.0.1:53")!
    let receivedAt = Date()

    func resolve(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> Resolution {
        answer(for: name, index: 0)
    }

    func answer(for name: HostName, index: Int) -> Resolution {
        let address = IPAddress("10.\((index >> 16) & 255).\((index >> 8) & 255).\(index & 255)")!
        return Resolution(name: name, addresses: [ResolvedAddress(address: address, ttl: 3600)], cnames: [],
                          upstream: upstream, source: .upstream, receivedAt: receivedAt)
    }
}
