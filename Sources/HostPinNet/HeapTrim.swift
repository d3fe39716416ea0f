import CEpoll
import Dispatch

/// Hands the heap's free pages back to the kernel once a burst of work has ended (`malloc_trim(3)`; glibc).
///
/// A flood of new names against a silent upstream keeps thousands of queries waiting at once for their
/// budget; when they are done their memory is free but stays in glibc's arenas (one per thread that
/// allocated it: the pool's, the c-ares channels', the receiving threads'), and the stub's resident
/// memory stayed near its peak (142 of 168 MB, measured). Each arena is trimmed only at its top, so the
/// pages in between are given back here, once per burst, on a queue of its own: `malloc_trim` walks every
/// arena, which is no work for the cooperative pool.
package enum HeapTrim {
    private static let queue = DispatchQueue(label: "hostpin-heap-trim")

    /// Trims the heap in a second, off the caller's thread: the last of a burst's tasks and exchanges are
    /// still being freed when the count of them reaches zero (trimmed at once, 46 of 57 MB stayed; a
    /// trim a few seconds later brought it to 35, the 33 of before the burst).
    package static func afterBurst() {
        queue.asyncAfter(deadline: .now() + .seconds(1)) { _ = malloc_trim(0) }
    }
}
