import HostPin
import Synchronization

/// Wraps a resolver and counts the names it is asked for, so a test sees what the proxy resolved (a
/// `pin` rule's host: nothing).
final class CountingResolver: HostResolver {
    let inner: any HostResolver
    private let counts = Mutex<[String: Int]>([:])

    init(_ inner: any HostResolver) {
        self.inner = inner
    }

    func resolve(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> Resolution {
        counts.withLock { $0[name.text, default: 0] += 1 }
        return try await inner.resolve(name, family: family)
    }

    func count(_ name: String) -> Int { counts.withLock { $0[name] ?? 0 } }
}
