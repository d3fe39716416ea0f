import Foundation
import HostPinTestSupport
import Testing

/// The built `hostpin` executable, run as a user runs it. Tests never let it fall back to the public
/// default upstreams (there is no network here): each passes `--server` or `HOSTPIN_UPSTREAMS`.
enum HostPinBinary {
    /// Why the binary cannot be run.
    struct Missing: Error, CustomStringConvertible {
        let searched: [String]
        var description: String { "no built hostpin at \(searched.joined(separator: " or ")): run `swift build` first" }
    }

    /// The executable beside the test bundle (the same build configuration), else `<repo>/.build/debug/hostpin`.
    static func path() throws -> String {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("hostpin").path
        let debug = Lab.repositoryRoot.appendingPathComponent(".build/debug/hostpin").path
        let candidates = [beside, debug]
        guard let found = candidates.first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw Missing(searched: candidates)
        }
        return found
    }

    /// Runs `hostpin arguments…`. `HOSTPIN_UPSTREAMS` is cleared unless `environment` sets it, so a
    /// value in the developer's shell cannot change what a test checks.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> ProcessRunner.Result {
        let environment = ["HOSTPIN_UPSTREAMS": ""].merging(environment) { $1 }
        return try await ProcessRunner.run(try path(), arguments, environment: environment)
    }
}
