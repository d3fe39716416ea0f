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
    static func run(_ arguments: [String], environment: [String: String] = [:], input: String? = nil) async throws
        -> ProcessRunner.Result
    {
        let environment = ["HOSTPIN_UPSTREAMS": ""].merging(environment) { $1 }
        return try await ProcessRunner.run(try path(), arguments, environment: environment, input: input)
    }

    /// Runs `hostpin arguments… bashSuffix` through bash, so a test can close or redirect the standard
    /// streams (`<&-`, `>/dev/full`, `0>/dev/null`) or pass a process substitution (`@<(echo hi)`, which
    /// becomes the last argument). `arguments` are passed as they are; only `bashSuffix` is bash syntax.
    static func run(_ arguments: [String], bashSuffix: String, environment: [String: String] = [:],
                    input: String? = nil) async throws -> ProcessRunner.Result {
        let environment = ["HOSTPIN_UPSTREAMS": ""].merging(environment) { $1 }
        return try await ProcessRunner.run("/bin/bash", ["-c", "exec \"$0\" \"$@\" \(bashSuffix)", try path()] + arguments,
                                           environment: environment, input: input)
    }
}
