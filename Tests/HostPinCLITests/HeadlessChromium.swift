import Foundation
import HostPinTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Debian's `chromium`, headless, in a temporary HOME whose NSS database (`certutil`, libnss3-tools)
/// trusts one CA: a real browser for the proxy's tests. Made after `scripts/lab up`, since the lab makes
/// a new CA at every start. The temporary folder (HOME, profile, output) is removed with the value.
final class HeadlessChromium: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// What one page load left.
    struct Page: Sendable {
        /// Chromium's exit status.
        let status: Int32
        /// `--dump-dom`'s output: the page's DOM, or nothing when the load failed.
        let dom: String
        /// Chromium's log, where a failed load says why (`Page load failed: net::ERR_…`).
        let log: String
    }

    static let executable = "/usr/bin/chromium"
    static let certutil = "/usr/bin/certutil"
    /// Whether both are installed (scripts/test installs them).
    static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: executable) && FileManager.default.isExecutableFile(atPath: certutil)
    }

    /// The longest one page load may take (about 2 s on an idle machine).
    static let loadLimit: Duration = .seconds(90)

    private let folder: URL

    /// A HOME whose NSS database (`$HOME/.pki/nssdb`, where Chromium on Linux reads it) trusts the CA in
    /// `caFile` (PEM) for TLS servers.
    init(trusting caFile: String) async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-chromium-\(UUID().uuidString)")
        let database = folder.appendingPathComponent("home/.pki/nssdb")
        try FileManager.default.createDirectory(at: database, withIntermediateDirectories: true)
        for arguments in [["-N", "-d", "sql:\(database.path)", "--empty-password"],
                          ["-A", "-d", "sql:\(database.path)", "-n", "hostpin-lab-ca", "-t", "C,,", "-i", caFile]] {
            let result = try await ProcessRunner.run(Self.certutil, arguments)
            guard result.status == 0 else {
                try? FileManager.default.removeItem(at: folder)
                throw Failure(description: "certutil \(arguments.joined(separator: " ")): \(result.standardError)")
            }
        }
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Loads `url` and returns its DOM (`--dump-dom`). Background networking is off, and every name
    /// the browser would resolve itself goes through `resolverRules` (`--host-resolver-rules`), so
    /// nothing it does leaves the machine; `proxy` (`IP:PORT`) is an HTTP proxy for every request;
    /// `extra` are more switches (`--virtual-time-budget=MS` lets the page's script run that long first,
    /// `--blink-settings=scriptEnabled=false` turns JavaScript off).
    ///
    /// Chromium runs in a process group of its own (Foundation's `Process` makes one per child), killed
    /// whole when the load outlasts ``loadLimit`` or the test is cancelled.
    func dumpDOM(_ url: String, proxy: String?, resolverRules: String, extra: [String] = []) async throws -> Page {
        let output = folder.appendingPathComponent("\(UUID().uuidString).dom")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        return try await load(url, proxy: proxy, resolverRules: resolverRules, switches: extra + ["--dump-dom"], output: output)
    }

    /// Loads `url` in a `width` × `height` window and writes a PNG of it to `path` (`--screenshot`), with
    /// ``dumpDOM(_:proxy:resolverRules:extra:)``'s precautions; the returned page's DOM is empty.
    func screenshot(_ url: String, to path: String, width: Int, height: Int, resolverRules: String, extra: [String] = []) async throws
        -> Page
    {
        try await load(url, proxy: nil, resolverRules: resolverRules,
                       switches: extra + ["--hide-scrollbars", "--window-size=\(width),\(height)", "--screenshot=\(path)"], output: nil)
    }

    private func load(_ url: String, proxy: String?, resolverRules: String, switches: [String], output: URL?) async throws -> Page {
        let run = UUID().uuidString
        let log = folder.appendingPathComponent("\(run).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = ["--headless", "--no-sandbox", "--disable-background-networking", "--no-first-run",
                             "--user-data-dir=\(folder.appendingPathComponent("profile-\(run)").path)",
                             "--host-resolver-rules=\(resolverRules)"]
            + (proxy.map { ["--proxy-server=http://\($0)"] } ?? []) + switches + [url]
        process.environment = ProcessInfo.processInfo.environment.merging(["HOME": folder.appendingPathComponent("home").path]) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try output.map { try FileHandle(forWritingTo: $0) } ?? FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        // Until Chromium has exited its PID is not reaped, so the group is still ours to kill. (Its crash
        // handlers run in sessions of their own and end with it.)
        defer { if process.isRunning { kill(-process.processIdentifier, SIGKILL) } }
        let deadline = ContinuousClock.now + Self.loadLimit
        while process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let read = { (file: URL) in (try? String(contentsOf: file, encoding: .utf8)) ?? "" }
        guard !process.isRunning else {
            throw Failure(description: "chromium did not load \(url) within \(Self.loadLimit): \(read(log).suffix(2000))")
        }
        return Page(status: process.terminationStatus, dom: output.map(read) ?? "", log: read(log))
    }
}
