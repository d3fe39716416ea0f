import Foundation
import HostPin
import Testing

/// The status page's bounded memories: the answers-per-second ring and the watch's findings, newest first;
/// and the HTML-safe JSON text `/status.json` is written in.
@Suite struct StatusHistoryTests {
    @Test func theRingKeepsTheLastSlotsOldestFirstAndMeasuresTheSlotInProgress() {
        let second: UInt64 = 1_000_000_000
        let history = AnswerRateHistory(slot: .seconds(10), slotCount: 3, total: 0, now: 0)
        // Four slots of 10 s with 10, 20, 30 and 40 answers: the first is forgotten.
        var total: UInt64 = 0
        for (index, answers) in [10, 20, 30, 40].enumerated() {
            total += UInt64(answers)
            history.sample(total: total, now: UInt64(index + 1) * 10 * second)
        }
        // 5 s into the slot in progress, 25 more answers: 5 per second.
        let points = history.points(total: total + 25, now: 45 * second)
        #expect(points == [.init(secondsAgo: 25, perSecond: 2), .init(secondsAgo: 15, perSecond: 3),
                           .init(secondsAgo: 5, perSecond: 4), .init(secondsAgo: 0, perSecond: 5)])
    }

    @Test func aCounterBelowTheLastSampleCountsAsNoAnswers() {
        let history = AnswerRateHistory(slot: .seconds(10), slotCount: 4, total: 100, now: 0)
        history.sample(total: 40, now: 10_000_000_000)
        #expect(history.points(total: 40, now: 10_000_000_000).map(\.perSecond) == [0])
    }

    @Test func findingsKeepTheNewestThousandNewestFirst() throws {
        let findings = HijackFindings()
        #expect(findings.limit == 1000)
        let local = try #require(IPAddress("127.0.0.66"))
        for index in 1...1005 {
            findings.record(HijackReport(name: try HostName.parse("n\(index).example.test"), family: .v4, trusted: .nxdomain,
                                         local: [local], reasons: [HijackReason(.nxdomainRewrite, "r")]),
                            at: Date(timeIntervalSince1970: Double(index)))
        }
        let kept = findings.newestFirst
        #expect(kept.count == 1000 && findings.total == 1005)
        #expect(kept.first?.report.name.text == "n1005.example.test" && kept.last?.report.name.text == "n6.example.test")
        #expect(zip(kept, kept.dropFirst()).allSatisfy { $0.foundAt > $1.foundAt })
    }

    @Test func htmlSafeJSONEscapesMarkupAndReadsBack() throws {
        let text = "</script><b>&'\"\\\u{2028}\u{1}é"
        let value = JSONValue.object(["b": .array([.number(1), .number(0.5), .null, .bool(true)]), "a": .string(text)])
        let json = value.htmlSafeText
        #expect(json == #"{"a":"\u003c/script\u003e\u003cb\u003e\u0026\u0027\"\\\u2028\u0001é","b":[1,0.5,null,true]}"#)
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)) == value)
    }
}
