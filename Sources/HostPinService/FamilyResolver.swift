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

    package func resolveDetailed(_ name: HostName, family _: AddressFamily) async throws(ResolutionError) -> ResolutionOutcome {
        try await inner.resolveDetailed(name, family: family)
    }

    // The cache's hit read in place: without it every request of the proxy built a `Resolution`.
    package func cachedAddresses(_ name: HostName, family _: AddressFamily) -> CachedAddresses? {
        inner.cachedAddresses(name, family: family)
    }

    // The routes (split DNS) of `inner` decide for the proxy's rebinding guard and the cache.
    package func routesSpecialUse(_ name: HostName) -> Bool { inner.routesSpecialUse(name) }

    package func allowsPrivateAddresses(for name: HostName) -> Bool { inner.allowsPrivateAddresses(for: name) }

    package func servesStale(_ name: HostName) -> Bool { inner.servesStale(name) }
}
