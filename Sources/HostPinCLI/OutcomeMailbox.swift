import HostPin
import Synchronization

/// Where the outcomes of a ``BatchResolution`` wait for `hostpin lookup`'s loop, which takes them all at
/// once: one wake-up of the loop per batch of outcomes rather than one `AsyncStream` element (and a
/// resumption of the waiting task) per name.
///
/// ``post(_:outcome:)`` runs on whichever thread ended a resolution (a c-ares channel's, mostly) and
/// tells its caller to wake the loop only when the mailbox was empty; ``takeAll(into:)`` swaps the whole
/// list out. A post after the swap finds the list empty and wakes the loop again, so no outcome waits
/// unseen.
final class OutcomeMailbox: Sendable {
    typealias Delivery = (tag: Int, outcome: Result<ResolutionOutcome, ResolutionError>)

    /// Outcomes posted since the last ``takeAll(into:)``.
    private let posted = Mutex<[Delivery]>([])

    /// Adds one outcome; `true` when the list was empty, so the caller must wake the loop.
    func post(_ tag: Int, outcome: Result<ResolutionOutcome, ResolutionError>) -> Bool {
        posted.withLock { posted in
            posted.append((tag, outcome))
            return posted.count == 1
        }
    }

    /// Moves every posted outcome into `deliveries` (emptied first; its storage goes to the mailbox, so
    /// the two lists trade buffers and appending seldom allocates).
    func takeAll(into deliveries: inout [Delivery]) {
        deliveries.removeAll(keepingCapacity: true)
        posted.withLock { swap(&$0, &deliveries) }
    }
}
