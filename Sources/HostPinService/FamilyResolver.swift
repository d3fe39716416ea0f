import HostPin

/// Narrows every resolution to the `--family` asked for.
package struct FamilyResolver: HostResolver {
    package let inner: any HostResolver
    package let family: AddressFamily

    package init(inner: any HostResolver, family: AddressFamily) {
        self.inner = inner
        self.family = family
    }

    package func resolve(_ name: HostName, family _: AddressFamily) async throws(ResolutionError) -> Resolution {
        try await inner.resolve(name, family: family)
    }
}
