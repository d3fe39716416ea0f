import Foundation

extension ProcessRunner {
    /// ``run(_:_:environment:input:)`` on a thread of its own, so the calling task suspends instead of
    /// blocking a thread of Swift's cooperative pool. Tests run in parallel on that pool (two threads on
    /// a 2-core machine): one blocked for a child's whole run stalls every other test's timers.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                           input: String? = nil) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            // A thread of its own: on Linux DispatchQueue.global() is also where Swift's pool runs.
            Thread {
                continuation.resume(with: Swift.Result {
                    try run(executable, arguments, environment: environment, input: input)
                })
            }.start()
        }
    }
}
