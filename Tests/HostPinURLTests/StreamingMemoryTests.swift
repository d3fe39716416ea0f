import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import HostPinTestSupport
import HostPinURL
import Testing

extension InterceptorTests {
    /// A 100 MiB download through the interceptor, consumed by a delegate that drops each chunk, must not
    /// be held in memory: the process's peak resident size grows by less than 32 MiB on the libcurl
    /// transport, plain HTTP (`plainHTTP: .libcurl`), HTTPS and IPv6. (The inner-URLSession path has no
    /// flow control: FoundationNetworking drives it without any.)
    @Suite struct StreamingMemoryTests {
        static let size = 100 * 1024 * 1024

        @Test(arguments: [("www.example.test", "http"), ("www.example.test", "https"), ("v6only.example.test", "http")])
        func hundredMebibytesStreamWithoutBuffering(host: String, scheme: String) async throws {
            let counter = DataCollector(keepingData: false)
            let session = try PinnedLab.session(delegate: counter, plainHTTP: .libcurl)
            defer { PinnedLab.reinstall() }
            let url = try PinnedLab.url(host, "/bytes/\(Self.size)", scheme: scheme)
            let baseline = try Memory.resetPeak()
            session.dataTask(with: url).resume()
            let result = await counter.result()
            let growth = try Memory.peak() - baseline
            #expect(result.error == nil)
            #expect(result.bytes == Self.size)
            #expect(result.chunkCount > 10)  // delivered as it arrived, not in one piece
            #expect(growth < 32 * 1024 * 1024, "peak RSS grew by \(growth / 1024 / 1024) MiB")
        }
    }
}

/// The process's resident memory from /proc (Linux).
enum Memory {
    /// Resets the peak (VmHWM) to the current size (`echo 5 > /proc/self/clear_refs`) and returns it.
    static func resetPeak() throws -> Int {
        try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        return try field("VmRSS")
    }

    /// The peak resident size since the last reset, in bytes.
    static func peak() throws -> Int { try field("VmHWM") }

    private static func field(_ name: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
}
