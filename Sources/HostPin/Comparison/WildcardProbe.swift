/// The wildcard probe: a random name under the compared name's parent, which certainly does not exist,
/// asked of both sides. A local resolver that answers it with the address it gave for the name answers
/// every name so (a wildcard redirect); the trusted side's answer tells a real wildcard record in the
/// zone (RFC 4592) apart from that.
public struct WildcardProbe: Sendable, Hashable {
    /// The random name asked: `hostpin-` and 16 random letters and digits, then the parent.
    public let name: HostName
    /// The local resolver's outcome for ``name``.
    public let local: Result<Resolution, ResolutionError>
    /// The trusted side's outcome for ``name``.
    public let trusted: Result<Resolution, ResolutionError>

    public init(name: HostName, local: Result<Resolution, ResolutionError>, trusted: Result<Resolution, ResolutionError>) {
        self.name = name
        self.local = local
        self.trusted = trusted
    }

    /// A new random name beside `name` (its first label replaced: `www.example.test` gives
    /// `hostpin-3k9x….example.test`), or `nil` for an IP literal, `localhost`, or a name too long to
    /// take the label. 16 characters of 36 make about 82 random bits: no zone holds such a name by chance.
    public static func randomName(beside name: HostName) -> HostName? {
        guard name.literalAddress == nil, !name.isLocalhost else { return nil }
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        let label = "hostpin-" + String((0..<16).map { _ in alphabet[Int.random(in: 0..<alphabet.count)] })
        let parent = name.text.firstIndex(of: ".").map { name.text[$0...] } ?? ""
        return try? HostName.parse(label + parent)
    }

    /// Asks `local` and `trusted` for a new random name beside `name` (``randomName(beside:)``), both at once.
    ///
    /// - Returns: The probe, or `nil` when `name` has no such name.
    public static func run(beside name: HostName, family: AddressFamily, trusted: any HostResolver,
                           local: any HostResolver) async -> WildcardProbe? {
        guard let probe = randomName(beside: name) else { return nil }
        async let localOutcome = outcome(of: local, probe, family)
        async let trustedOutcome = outcome(of: trusted, probe, family)
        return WildcardProbe(name: probe, local: await localOutcome, trusted: await trustedOutcome)
    }

    private static func outcome(of resolver: any HostResolver, _ name: HostName, _ family: AddressFamily) async
        -> Result<Resolution, ResolutionError>
    {
        do throws(ResolutionError) {
            return .success(try await resolver.resolve(name, family: family))
        } catch {
            return .failure(error)
        }
    }
}
