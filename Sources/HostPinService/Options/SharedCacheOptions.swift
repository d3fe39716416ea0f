import Foundation
import HostPin

/// `--shared-cache redis://HOST:PORT[/DB]`, `--shared-cache-secret FILE` and
/// `--shared-cache-password-file FILE` (`serve`, `proxy`; the configuration file's `cache.shared`,
/// `cache.sharedSecretFile`, `cache.sharedPasswordFile`): the second level under the service's memory
/// cache (``SharedCache`` in a ``RedisStore``).
public struct SharedCacheOptions: Sendable, Equatable {
    /// Where Redis listens.
    public var endpoint: RedisEndpoint
    /// The fleet's secret (the secret file's bytes).
    public var secret: SharedCacheSecret
    /// The password for `AUTH` (the password file's bytes, without a final newline); `nil` sends none.
    public var password: [UInt8]?

    public init(endpoint: RedisEndpoint, secret: SharedCacheSecret, password: [UInt8]? = nil) {
        self.endpoint = endpoint
        self.secret = secret
        self.password = password
    }

    /// The most a secret or password file may hold.
    package static let fileLimit = 4096

    /// Takes the three options from `parser`; `nil` without `--shared-cache`. The files are read now.
    ///
    /// - Throws: ``UsageError`` naming the option: a URL that is not `redis://HOST:PORT[/DB]` (TLS and a
    ///   password inside it refused), no `--shared-cache-secret` (or one without `--shared-cache`), an
    ///   unreadable file, a secret shorter than 16 bytes.
    package static func parse(_ parser: inout OptionParser) throws(UsageError) -> SharedCacheOptions? {
        let endpoint = try parser.values("--shared-cache") { text throws(UsageError) -> RedisEndpoint in
            do throws(RedisEndpointError) {
                return try RedisEndpoint.parse(text)
            } catch {
                throw .invalidValue(option: "--shared-cache", reason: "'\(text)': \(error)")
            }
        }.last
        let secretPath = try parser.values("--shared-cache-secret") { $0 }.last
        let passwordPath = try parser.values("--shared-cache-password-file") { $0 }.last
        guard let endpoint else {
            if secretPath != nil || passwordPath != nil {
                throw .conflict("--shared-cache-secret and --shared-cache-password-file need --shared-cache")
            }
            return nil
        }
        guard let secretPath else {
            throw .invalidValue(option: "--shared-cache",
                                reason: "it needs --shared-cache-secret FILE (the fleet's secret, at least \(SharedCacheSecret.minimumLength) bytes)")
        }
        let secretBytes = try read(secretPath, option: "--shared-cache-secret")
        let secret: SharedCacheSecret
        do throws(SharedCacheSecretError) {
            secret = try SharedCacheSecret(secretBytes)
        } catch {
            throw .unreadableFile(option: "--shared-cache-secret", path: secretPath, reason: error.description)
        }
        var password: [UInt8]?
        if let passwordPath {
            var bytes = try read(passwordPath, option: "--shared-cache-password-file")
            while bytes.last == 0x0A || bytes.last == 0x0D { bytes.removeLast() }
            guard !bytes.isEmpty else {
                throw .unreadableFile(option: "--shared-cache-password-file", path: passwordPath, reason: "it is empty")
            }
            password = bytes
        }
        return SharedCacheOptions(endpoint: endpoint, secret: secret, password: password)
    }

    /// The bytes of the file at `path`, at most ``fileLimit``.
    private static func read(_ path: String, option: String) throws(UsageError) -> [UInt8] {
        try InputFile.checkReadable(path, option: option)
        do throws(FileProblem) {
            // A regular file only, read within the bound: /dev/zero or a FIFO is refused, never read on.
            return Array(try BoundedFile.contents(of: path, limit: fileLimit))
        } catch .tooLarge {
            throw .unreadableFile(option: option, path: path, reason: "it is larger than \(fileLimit) bytes")
        } catch {
            throw .unreadableFile(option: option, path: path, reason: error.description)
        }
    }

    /// The help lines for these options.
    package static func helpLines(width: Int) -> String {
        let indent = String(repeating: " ", count: width + 2)
        func option(_ name: String) -> String {
            name.count < width ? "  " + name.padding(toLength: width, withPad: " ", startingAt: 0) : "  \(name)\n" + indent
        }
        return [
            option("--shared-cache URL") + "Share answers with other instances through Redis at URL,",
            indent + "redis://HOST:PORT[/DB] (HOST an IP address or localhost; no TLS): a miss in",
            indent + "memory asks Redis, waiting at most 20 ms before asking the upstreams too.",
            option("--shared-cache-secret FILE") + "The fleet's secret (at least 16 bytes; required with --shared-cache): it",
            indent + "hashes the keys and authenticates every value (HMAC-SHA-256).",
            option("--shared-cache-password-file FILE") + "Send the password in FILE to Redis (AUTH).",
        ].joined(separator: "\n")
    }

    /// The store and the shared cache these options ask for, written and read under `resolver`'s
    /// DNSSEC mode and upstreams.
    package func makeSharedCache(for resolver: TrustedResolver.Configuration) -> SharedCache {
        SharedCache(store: RedisStore(endpoint: endpoint, password: password), secret: secret, policy: Self.policy(for: resolver))
    }

    /// The policy of a writer resolving with `resolver`: its DNSSEC mode and its upstreams.
    package static func policy(for resolver: TrustedResolver.Configuration) -> SharedCachePolicy {
        SharedCachePolicy(dnssec: resolver.dnssec.mode, route: resolver.upstreams.map(\.description))
    }
}
