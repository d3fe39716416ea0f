import HostPin
@testable import HostPinProxy
import Testing

/// Which targets reach the proxy's own listening socket, compared by address: for a proxy bound to a
/// specific address and to the unspecified address (whose host addresses are given, so no test has to
/// listen beyond loopback).
@Suite struct ListeningEndpointTests {
    static let hostAddresses: @Sendable () -> [IPAddress] = {
        ["127.0.0.1", "192.0.2.7", "::1", "2001:db8::7"].compactMap(IPAddress.init)
    }

    static func endpoint(_ bound: String) throws -> ListeningEndpoint {
        ListeningEndpoint(bound: try #require(SocketAddress(bound)), hostAddresses: hostAddresses)
    }

    @Test(arguments: [
        ("127.0.0.1:8118", "127.0.0.1:8118", true), ("127.0.0.1:8118", "[::ffff:127.0.0.1]:8118", true),
        ("127.0.0.1:8118", "0.0.0.0:8118", true), ("127.0.0.1:8118", "[::ffff:0.0.0.0]:8118", true),
        ("127.0.0.1:8118", "127.0.0.1:8119", false), ("127.0.0.1:8118", "127.0.0.2:8118", false),
        ("127.0.0.1:8118", "[::1]:8118", false), ("127.0.0.1:8118", "[::]:8118", false),
        ("0.0.0.0:8118", "127.0.0.1:8118", true), ("0.0.0.0:8118", "127.3.2.1:8118", true),
        ("0.0.0.0:8118", "192.0.2.7:8118", true), ("0.0.0.0:8118", "[::ffff:192.0.2.7]:8118", true),
        ("0.0.0.0:8118", "0.0.0.0:8118", true), ("0.0.0.0:8118", "192.0.2.8:8118", false),
        ("0.0.0.0:8118", "[::1]:8118", false), ("0.0.0.0:8118", "192.0.2.7:80", false),
        ("[::]:8118", "[::1]:8118", true), ("[::]:8118", "[2001:db8::7]:8118", true), ("[::]:8118", "[::]:8118", true),
        ("[::]:8118", "127.0.0.1:8118", false), ("[::1]:8118", "[::]:8118", true), ("[::1]:8118", "[2001:db8::7]:8118", false),
    ])
    func targetReachesTheListenerByAddressNotSpelling(bound: String, target: String, reached: Bool) throws {
        #expect(try Self.endpoint(bound).isReached(by: try #require(SocketAddress(target))) == reached)
    }
}
