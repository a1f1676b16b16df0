/// The calls accepted and not answered yet, in ascending order. Ids are given in ascending order, so
/// noting a call appends it and an answer finds its call by binary search: no hashing per call, and
/// the calls come out in order when the session closes.
struct UnansweredCalls {
    private var ids: [CallID] = []

    /// Whether every call accepted so far was answered.
    var isEmpty: Bool { ids.isEmpty }

    /// The unanswered calls, oldest first.
    var inOrder: [CallID] { ids }

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
        let index = position(of: id)
        if index < ids.count, ids[index] == id { ids.remove(at: index) }
    }

    /// Lets go of the storage an emptied list keeps.
    mutating func releaseEmptiedStorage() {
        if ids.isEmpty, ids.capacity > 0 { ids = [] }
    }

    /// The index of the first id not below `id`.
    private func position(of id: CallID) -> Int {
        var low = 0
        var high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
