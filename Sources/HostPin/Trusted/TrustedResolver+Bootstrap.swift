extension TrustedResolver.Configuration {
    /// What looking up one encrypted upstream's NAME through the plain upstreams gave.
    public struct BootstrapLookup: Sendable, Hashable {
        /// The encrypted upstream's NAME.
        public let name: HostName
        /// Its addresses (A before AAAA), or why there are none.
        public let outcome: Result<[IPAddress], ResolutionError>
        /// The plain upstreams it was looked up through, in the order asked.
        public let through: [Upstream]
    }

    /// The NAMEs of the encrypted upstreams that have nowhere to connect to: host names without a
    /// bootstrap address, in list order, without repeats.
    public var encryptedNamesWithoutAddress: [HostName] {
        var names: [HostName] = []
        for upstream in upstreams {
            guard let encrypted = upstream.encrypted, encrypted.connectAddresses.isEmpty,
                  !names.contains(encrypted.name)
            else { continue }
            names.append(encrypted.name)
        }
        return names
    }

    /// Looks up every NAME in ``encryptedNamesWithoutAddress`` through the plain upstreams of this list,
    /// and only those (never the system's resolver), once, with this configuration's settings; returns
    /// this configuration with the addresses found as those upstreams' bootstrap, and what each lookup
    /// gave.
    ///
    /// The plain upstreams are trusted (they are in the list), but an address found through them is only
    /// as safe as plain DNS on the path. The encrypted upstream's certificate is still verified against
    /// NAME, so a forged address makes its connections fail, never its answers wrong. A NAME that is not
    /// found leaves its upstreams without an address: they fail every query
    /// (``EncryptedTransportFailure/noBootstrapAddress(_:)``) and the list fails over past them.
    ///
    /// - Returns: The configuration to resolve with, and one lookup per NAME; no lookup (and this
    ///   configuration unchanged) when every encrypted upstream has an address or no plain upstream is
    ///   listed.
    public func bootstrappingThroughPlainUpstreams() async -> (configuration: Self, lookups: [BootstrapLookup]) {
        let names = encryptedNamesWithoutAddress
        var plain = self
        plain.upstreams = upstreams.filter(\.isPlain)
        plain.untrustedFallback = nil
        plain.routes = .none
        guard !names.isEmpty, !plain.upstreams.isEmpty else { return (self, []) }
        let resolver: TrustedResolver
        do throws(ResolutionError) {
            resolver = try TrustedResolver(configuration: plain)
        } catch {
            return (self, names.map { BootstrapLookup(name: $0, outcome: .failure(error), through: plain.upstreams) })
        }
        var lookups: [BootstrapLookup] = []
        for name in names {
            let outcome: Result<[IPAddress], ResolutionError>
            do throws(ResolutionError) {
                outcome = .success(try await resolver.resolve(name, family: .any).ipAddresses)
            } catch {
                outcome = .failure(error)
            }
            lookups.append(BootstrapLookup(name: name, outcome: outcome, through: plain.upstreams))
        }
        var configured = self
        configured.upstreams = upstreams.map { upstream in
            guard var encrypted = upstream.encrypted, encrypted.connectAddresses.isEmpty,
                  let lookup = lookups.first(where: { $0.name == encrypted.name }),
                  case .success(let addresses) = lookup.outcome
            else { return upstream }
            encrypted.bootstrap = addresses
            return Upstream(encrypted)
        }
        return (configured, lookups)
    }
}
