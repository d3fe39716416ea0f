@testable import HostPin
import Testing

/// Query IDs come from the kernel's CSPRNG in blocks (``QueryID``): they must keep varying across refills.
@Suite struct QueryIDTests {
    @Test func idsVaryAcrossManyRefills() {
        let ids = (0..<4096).map { _ in QueryID.next() }
        // 4 096 draws from 65 536 values repeat about 125 times by chance; a pool handed out again, or
        // never refilled, repeats thousands.
        #expect(Set(ids).count > 3800)
        // Each block of 128 differs from the next.
        #expect(Array(ids[0..<128]) != Array(ids[128..<256]))
    }
}
