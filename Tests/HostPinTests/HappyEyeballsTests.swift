import HostPin
import Testing

/// The attempt order and the delay of RFC 8305: pure, no network.
@Suite struct HappyEyeballsTests {
    private func addresses(_ texts: [String]) throws -> [IPAddress] {
        try texts.map { try #require(IPAddress($0)) }
    }

    @Test func bothFamiliesAlternateStartingWithIPv6ByDefault() throws {
        let answer = try addresses(["127.0.0.10", "127.0.0.12", "127.0.0.13", "::1", "::2"])
        #expect(HappyEyeballs().order(answer).map(\.description)
            == ["::1", "127.0.0.10", "::2", "127.0.0.12", "127.0.0.13"])
    }

    @Test func preferringIPv4StartsWithTheFirstA() throws {
        let answer = try addresses(["::1", "::2", "127.0.0.10"])
        #expect(HappyEyeballs(preferredFamily: .v4).order(answer).map(\.description) == ["127.0.0.10", "::1", "::2"])
    }

    @Test(arguments: [["127.0.0.12", "127.0.0.10"], ["::2", "::1"], [], ["127.0.0.10"]])
    func oneFamilyKeepsTheAnswerOrder(_ texts: [String]) throws {
        let answer = try addresses(texts)
        #expect(HappyEyeballs().order(answer) == answer)
    }

    @Test(arguments: [(Duration.milliseconds(250), Duration.milliseconds(250)), (.zero, .milliseconds(10)),
                      (.milliseconds(-5), .milliseconds(10)), (.seconds(60), .seconds(2))])
    func attemptDelayStaysWithinRFC8305Bounds(_ asked: Duration, _ kept: Duration) {
        #expect(HappyEyeballs(attemptDelay: asked).attemptDelay == kept)
    }

    @Test func defaultDelayIs250Milliseconds() {
        #expect(HappyEyeballs().attemptDelay == .milliseconds(250))
        #expect(HappyEyeballs().preferredFamily == .v6)
    }
}
