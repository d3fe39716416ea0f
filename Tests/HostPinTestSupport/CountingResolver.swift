import HostPin
import Synchronization

/// Wraps a resolver and counts the names it is asked for, so a test sees what the proxy or the
/// interceptor resolved (a `pin` rule's host: nothing).
public final class CountingResolver: HostResolver {
    public let inner: any HostResolver
    private let counts = Mutex<[String: Int]>([:])

    public init(_ inner: any HostResolver) {
        self.inner = inner
    }

    public func resolve(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> Resolution {
        counts.withLock { $0[name.text, default: 0] += 1 }
        return try await inner.resolve(name, family: family)
    }

    /// How often `name` (normalised: lower case, no trailing dot) was asked for.
    public func count(_ name: String) -> Int { counts.withLock { $0[name] ?? 0 } }
}
