/// The calls accepted and not answered yet, in ascending order. Ids are given in ascending order and
/// mostly answered oldest first, so noting a call is an append, answering the oldest moves a start
/// index, and any other answer finds its call by binary search: no hashing per call, and the calls come
/// out in order when the session closes.
struct UnansweredCalls {
    /// The calls from `start` on are unanswered; those before it were answered and wait to be dropped.
    private var ids: [CallID] = []
    private var start = 0

    /// Whether every call accepted so far was answered.
    var isEmpty: Bool { start == ids.count }

    /// The unanswered calls, oldest first.
    var inOrder: [CallID] { Array(ids[start...]) }

    /// Notes an accepted call. `id` is above every id noted before (``AccessEnabler`` counts them up);
    /// one that is not is put in its place all the same.
    mutating func insert(_ id: CallID) {
        guard let last = ids.last, id <= last else {
            ids.append(id)
            return
        }
        let index = position(of: id)
        if index == ids.count || ids[index] != id { ids.insert(id, at: index) }
    }

    /// Notes that `id` was answered (nothing changes when it is not unanswered).
    mutating func remove(_ id: CallID) {
        guard !isEmpty else { return }
        if ids[start] == id {
            start += 1
        } else {
            let index = position(of: id)
            guard index < ids.count, ids[index] == id else { return }
            ids.remove(at: index)
        }
        if isEmpty {
            ids.removeAll(keepingCapacity: true)
            start = 0
        } else if start >= 64, start * 2 >= ids.count {
            // Drops the answered prefix once it is half the list: each answer costs O(1) amortized.
            ids.removeFirst(start)
            start = 0
        }
    }

    /// Lets go of the storage an emptied list keeps.
    mutating func releaseEmptiedStorage() {
        if isEmpty, ids.capacity > 0 {
            ids = []
            start = 0
        }
    }

    /// The index, at `start` or after, of the first id not below `id`.
    private func position(of id: CallID) -> Int {
        var low = start
        var high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
