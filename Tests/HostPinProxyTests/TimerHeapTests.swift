@testable import HostPinNet
import Testing

/// The event loop's timer heap: due entries come out earliest first, later ones stay.
@Suite struct TimerHeapTests {
    @Test func dueEntriesComeOutInDeadlineOrderAndLaterOnesStay() {
        let start = ContinuousClock.now
        var heap = TimerHeap()
        let offsets = [70, 10, 50, 30, 90, 20, 80, 40, 60, 0]
        for (token, offset) in offsets.enumerated() {
            heap.push(.init(deadline: start + .milliseconds(offset), token: UInt64(token), direction: .read))
        }
        #expect(heap.earliest == start)
        let due = heap.popDue(start + .milliseconds(45))
        #expect(due.map(\.deadline) == [0, 10, 20, 30, 40].map { start + .milliseconds($0) })
        #expect(heap.count == 5)
        heap.retain { $0.token % 2 == 0 }  // tokens 0 (70), 2 (50), 4 (90), 6 (80), 8 (60)
        #expect(heap.popDue(start + .seconds(1)).map(\.deadline) == [50, 60, 70, 80, 90].map { start + .milliseconds($0) })
        #expect(heap.earliest == nil)
    }
}
