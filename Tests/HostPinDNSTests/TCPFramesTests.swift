@testable import HostPinDNS
import Testing

@Suite struct TCPFramesTests {
    @Test func messagesSplitAcrossReadsComeOutWhole() {
        var frames = TCPFrames()
        let first: [UInt8] = Array(1...5)
        let second: [UInt8] = Array(repeating: 7, count: 300)
        let stream = TCPFrames.frame(first) + TCPFrames.frame(second)
        for byte in stream.prefix(3) { frames.append([byte]) }
        #expect(frames.next() == nil)
        frames.append(Array(stream[3..<stream.count - 1]))
        #expect(frames.next() == first)
        #expect(frames.next() == nil)
        frames.append([stream.last!])
        #expect(frames.next() == second)
        #expect(frames.pending == 0)
    }
}
