/// A first-in, first-out queue that also takes items at its front (held calls handed back go before
/// everything queued), each operation O(1) amortized: the mailbox of an engine whose callers queue
/// faster than its steps run does not copy itself at every step, as `Array.removeFirst()` would.
struct WorkQueue<Element> {
    /// The front of the queue, last item first out.
    private var front: [Element] = []
    /// The back of the queue, in order.
    private var back: [Element] = []

    /// Whether nothing is queued.
    var isEmpty: Bool { front.isEmpty && back.isEmpty }

    /// How many items are queued.
    var count: Int { front.count + back.count }

    /// Queues `item` last.
    mutating func append(_ item: Element) { back.append(item) }

    /// Queues `items` first, in their order.
    mutating func prepend(contentsOf items: [Element]) { front.append(contentsOf: items.reversed()) }

    /// Takes the first item, if any.
    mutating func popFirst() -> Element? {
        if front.isEmpty {
            guard !back.isEmpty else { return nil }
            front = back.reversed()
            back.removeAll(keepingCapacity: true)
        }
        return front.popLast()
    }

    /// Lets go of the storage an emptied queue keeps.
    mutating func releaseEmptiedStorage() {
        if front.isEmpty { front = [] }
        if back.isEmpty { back = [] }
    }

    /// Empties the queue.
    mutating func removeAll() {
        front.removeAll()
        back.removeAll()
    }
}

/// A queue of sendable items is sendable (the actor's state is).
extension WorkQueue: Sendable where Element: Sendable {}
