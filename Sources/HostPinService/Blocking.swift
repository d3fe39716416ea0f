import Foundation

/// Runs blocking work (a read on standard input, a wait on a semaphore or a pipe) on a thread of its
/// own and suspends the caller until it is done.
///
/// Not `DispatchQueue.global()`: on Linux Swift's cooperative pool runs on that same root queue, whose
/// width is the core count (two here), so a blocked global-queue thread is a pool thread lost.
package enum Blocking {
    package static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    package static func run(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { continuation in
            Thread {
                body()
                continuation.resume()
            }.start()
        }
    }
}
