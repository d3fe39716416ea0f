import CAres
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// DNS query IDs no off-path attacker can predict (RFC 5452 §4.3), from the kernel's CSPRNG
/// (`getrandom(2)`) 128 at a time: one system call per 128 queries instead of one per query
/// (`UInt16.random(in:)` asks the kernel for every value; `ldns_get_random`, OpenSSL's `RAND_bytes`,
/// costs more still: a `getpid(2)` per call for its fork check).
enum QueryID {
    private struct Pool {
        var ids = [UInt16](repeating: 0, count: 128)
        /// The next unused ID; ``ids`` is refilled when it reaches the end.
        var next = 128
    }

    private static let pool = Mutex(Pool())

    /// The next unpredictable ID.
    static func next() -> UInt16 {
        pool.withLock { pool in
            if pool.next == pool.ids.count {
                let filled = pool.ids.withUnsafeMutableBytes { getrandom($0.baseAddress, $0.count, 0) }
                if filled != pool.ids.count * MemoryLayout<UInt16>.size {
                    // getrandom(2) fills up to 256 bytes whole once the kernel's pool is ready; should it
                    // not, the standard library's generator (the same source, one call per value) does.
                    var generator = SystemRandomNumberGenerator()
                    for index in pool.ids.indices { pool.ids[index] = generator.next() }
                }
                pool.next = 0
            }
            defer { pool.next += 1 }
            return pool.ids[pool.next]
        }
    }
}
