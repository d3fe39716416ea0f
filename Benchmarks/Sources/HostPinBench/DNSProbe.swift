#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// Item 1's peer: one query at a time to a caching resolver (Unbound) on loopback. The query is built
/// once (RFC 1035 wire format, A/IN, RD set; only the 16-bit ID changes per query, as dnsperf does);
/// the client `send`s on a connected UDP socket and waits in a blocking `recv` until the answer with the
/// same ID arrives. Reports p50/p90/p99 round trip in nanoseconds.
enum DNSProbe {
    static func run(_ options: Options) {
        let server = options.string("server")
        let name = options.string("name", "www.example.test")
        let count = options.int("count", 5_000)
        let warmup = options.int("warmup", 200)
        let id = options.string("id", "unbound")
        guard let colon = server.lastIndex(of: ":"), let port = UInt16(server[server.index(after: colon)...]) else {
            fail("--server wants IP:PORT")
        }
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { fail("socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, String(server[..<colon]), &address.sin_addr) == 1 else { fail("bad address \(server)") }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { fail("connect: \(errno)") }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        var query: [UInt8] = [0, 0, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
        for label in name.split(separator: ".") {
            query.append(UInt8(label.utf8.count))
            query.append(contentsOf: label.utf8)
        }
        query += [0, 0, 1, 0, 1]
        var answer = [UInt8](repeating: 0, count: 4096)
        var samples: [Double] = []
        samples.reserveCapacity(count)
        for i in 0..<(warmup + count) {
            let queryID = UInt16(truncatingIfNeeded: i &* 7919 &+ 1)
            query[0] = UInt8(queryID >> 8)
            query[1] = UInt8(queryID & 0xFF)
            let t0 = nowNanoseconds()
            guard send(fd, query, query.count, 0) == query.count else { fail("send: \(errno)") }
            while true {
                let n = recv(fd, &answer, answer.count, 0)
                guard n >= 12 else { fail("recv: \(n < 0 ? "errno \(errno)" : "short answer") from \(server)") }
                if answer[0] == query[0], answer[1] == query[1] { break }
            }
            let elapsed = nowNanoseconds() - t0
            let rcode = answer[3] & 0x0F
            let answers = Int(answer[6]) << 8 | Int(answer[7])
            guard rcode == 0, answers > 0 else { fail("\(name) at \(server): rcode \(rcode), \(answers) answers") }
            if i >= warmup { samples.append(Double(elapsed)) }
        }
        samples.sort()
        report("\(id).p50", percentile(samples, 50))
        report("\(id).p90", percentile(samples, 90))
        report("\(id).p99", percentile(samples, 99))
    }
}
