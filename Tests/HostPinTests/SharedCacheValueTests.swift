import Foundation
@testable import HostPin
import Testing

/// The shared cache's value format (``SharedCacheValue``, ``SharedCacheKey``): what a reader accepts, and
/// every way a value written by someone else, changed, replayed or written under another policy is refused.
@Suite struct SharedCacheValueTests {
    static let secret = try! SharedCacheSecret(Array("a fleet secret of 32 bytes here!".utf8))
    static let validating = SharedCachePolicy(dnssec: .validate, route: ["127.0.0.1:5353"])
    static let www = try! HostName.parse("www.example.test")
    static let now: UInt64 = 1_800_000_000

    static func value(policy: SharedCachePolicy = validating, dnssec: DNSSECStatus? = .secure,
                      expiresAt: UInt64 = now + 60) -> SharedCacheValue {
        SharedCacheValue(wire: [1, 2, 3, 4], expiresAt: expiresAt, receivedAt: (now - 10) * 1000, dnssec: dnssec,
                         policy: policy)
    }

    static func open(_ bytes: [UInt8], key: SharedCacheKey = SharedCacheKey(name: www, family: .any, secret: secret),
                     secret: SharedCacheSecret = secret, policy: SharedCachePolicy = validating)
        -> Result<SharedCacheValue, SharedCacheValue.Rejection>
    {
        do throws(SharedCacheValue.Rejection) {
            return .success(try SharedCacheValue.open(bytes, key: key, secret: secret, policy: policy, now: now))
        } catch {
            return .failure(error)
        }
    }

    var key: SharedCacheKey { SharedCacheKey(name: Self.www, family: .any, secret: Self.secret) }

    @Test func aSealedValueOpensWithEveryField() throws {
        let value = Self.value()
        let sealed = try #require(value.sealed(key: key, secret: Self.secret))
        #expect(Self.open(sealed) == .success(value))
        #expect(sealed.count == 4 + 8 + 8 + 1 + 2 + Self.validating.encoded.count + 4 + 4 + 32)
    }

    @Test func everyChangedByteIsRefusedAsABadTag() throws {
        let sealed = try #require(Self.value().sealed(key: key, secret: Self.secret))
        for index in sealed.indices {
            var changed = sealed
            changed[index] ^= 0x01
            #expect(Self.open(changed) == .failure(.badTag), "byte \(index)")
        }
        #expect(Self.open(Array(sealed.dropLast())) == .failure(.badTag))
        #expect(Self.open([]) == .failure(.malformed))
    }

    @Test func aValueReplayedUnderAnotherNamesKeyIsRefused() throws {
        let sealed = try #require(Self.value().sealed(key: key, secret: Self.secret))
        let cdn = SharedCacheKey(name: try HostName.parse("cdn.example.test"), family: .any, secret: Self.secret)
        let v4 = SharedCacheKey(name: Self.www, family: .v4, secret: Self.secret)
        #expect(Self.open(sealed, key: cdn) == .failure(.badTag))
        #expect(Self.open(sealed, key: v4) == .failure(.badTag))
    }

    @Test func aValueWrittenWithAnotherSecretIsRefused() throws {
        let other = try SharedCacheSecret(Array("another secret, also long enough".utf8))
        let sealed = try #require(Self.value().sealed(key: key, secret: other))
        #expect(Self.open(sealed) == .failure(.badTag))
    }

    @Test func aValueOfAnotherPolicyIsRefused() throws {
        // A writer that does not validate cannot feed a reader that does, nor one with other upstreams.
        let unvalidating = SharedCachePolicy(dnssec: .off, route: ["127.0.0.1:5353"])
        let otherRoute = SharedCachePolicy(dnssec: .validate, route: ["127.0.0.2:5353"])
        for writer in [unvalidating, otherRoute] {
            let sealed = try #require(Self.value(policy: writer, dnssec: writer.dnssec == .off ? nil : .secure)
                .sealed(key: key, secret: Self.secret))
            #expect(Self.open(sealed) == .failure(.otherPolicy))
            #expect(Self.open(sealed, policy: writer).map(\.expiresAt) == .success(Self.now + 60))
        }
    }

    @Test func anExpiredValueIsRefused() throws {
        let sealed = try #require(Self.value(expiresAt: Self.now).sealed(key: key, secret: Self.secret))
        #expect(Self.open(sealed) == .failure(.expired))
    }

    @Test func anUnvalidatedValueIsRefusedByAValidatingReaderAndABogusOneIsNeverSealed() throws {
        let sealed = try #require(Self.value(dnssec: nil).sealed(key: key, secret: Self.secret))
        #expect(Self.open(sealed) == .failure(.unvalidated))
        #expect(Self.value(dnssec: .bogus(BogusReason(rrset: "www.example.test. A", problem: .signaturesMissing))).sealed(key: key, secret: Self.secret) == nil)
    }

    @Test func keysHideTheNameAndDifferByFamilyAndSecret() throws {
        let other = try SharedCacheSecret(Array("another secret, also long enough".utf8))
        let keys = [key, SharedCacheKey(name: Self.www, family: .v4, secret: Self.secret),
                    SharedCacheKey(name: Self.www, family: .v6, secret: Self.secret),
                    SharedCacheKey(name: Self.www, family: .any, secret: other)]
        #expect(Set(keys.map(\.text)).count == 4)
        #expect(keys.allSatisfy { $0.text.hasPrefix("hostpin:") && $0.text.count == 8 + 64 && !$0.text.contains("www") })
        #expect(key == SharedCacheKey(name: try HostName.parse("WWW.Example.Test."), family: .any, secret: Self.secret))
    }

    @Test func aSecretShorterThanSixteenBytesIsRefused() {
        #expect(throws: SharedCacheSecretError.tooShort(15)) { try SharedCacheSecret(Array(repeating: 7, count: 15)) }
        #expect((try? SharedCacheSecret(Array(repeating: 7, count: 16))) != nil)
    }

    @Test func tagsAreHMACSHA256AsRFC4231Says() {
        // RFC 4231 §4.3, test case 2.
        let tag = HMACSHA256.tag(Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8))
        #expect(tag.map { String(format: "%02x", $0) }.joined()
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(HMACSHA256.equal(tag, tag))
        #expect(!HMACSHA256.equal(tag, tag.dropLast()))
    }
}
