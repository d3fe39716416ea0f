/// The newest `capacity` elements appended, oldest first: a fixed ring that overwrites its oldest slot
/// once full. A value type, kept inside its owner's lock (``HijackFindings``, ``AnswerRateHistory``).
struct BoundedRing<Element: Sendable>: Sendable {
    /// The most elements kept; at least 1.
    let capacity: Int
    private var slots: [Element] = []
    /// Once full, the oldest slot (the next one overwritten).
    private var next = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Appends `element`, forgetting the oldest when ``capacity`` are kept.
    mutating func append(_ element: Element) {
        if slots.count < capacity {
            slots.append(element)
        } else {
            slots[next] = element
            next = (next + 1) % capacity
        }
    }

    /// The elements kept, oldest first.
    var oldestFirst: [Element] {
        Array(slots[next...] + slots[..<next])
    }
}
