/// The registry's index from session key to slot: open addressing with linear probing over 32-bit
/// slot numbers, the keys themselves read from the registry's entries (`keyAt(slot)`, nil for a
/// vacant slot: it reads the key in place, where passing an entry would copy it whole).
///
/// A `[SessionKey: Int]` keeps every key a second time in 40-byte buckets, about 100 bytes a session
/// with its spare capacity; this keeps 4-byte buckets, about 10. A removal shifts the entries after
/// it back (no tombstones), so lookups stay short however many sessions come and go.
struct SessionIndex {
    /// A slot number, or `vacant`; the count is a power of two (or zero).
    private var buckets: [Int32] = []
    /// How many slots are indexed.
    private(set) var count = 0

    private static let vacant: Int32 = -1
    /// The largest slot number a bucket holds.
    static let maximumSlot = Int(Int32.max)

    private var mask: Int { buckets.count - 1 }

    private func home(of key: SessionKey) -> Int { key.hashValue & mask }

    /// The slot indexed for `key`, whose entry holds it.
    func slot(of key: SessionKey, keyAt: (Int) -> SessionKey?) -> Int? {
        guard !buckets.isEmpty else { return nil }
        var bucket = home(of: key)
        while buckets[bucket] != Self.vacant {
            let slot = Int(buckets[bucket])
            if keyAt(slot) == key { return slot }
            bucket = (bucket + 1) & mask
        }
        return nil
    }

    /// Indexes `slot`, whose entry holds a key not indexed yet.
    mutating func insert(_ slot: Int, keyAt: (Int) -> SessionKey?) {
        precondition(slot <= Self.maximumSlot, "a session host holds at most \(Self.maximumSlot) sessions")
        if (count + 1) * 4 > buckets.count * 3 { grow(keyAt) }
        place(Int32(slot), key: keyAt(slot)!)
        count += 1
    }

    /// Removes `slot` (indexed, its entry still found by `keyAt`); later entries of its run shift back.
    mutating func remove(_ slot: Int, keyAt: (Int) -> SessionKey?) {
        guard !buckets.isEmpty, let key = keyAt(slot) else { return }
        var hole = home(of: key)
        while buckets[hole] != Int32(slot) {
            guard buckets[hole] != Self.vacant else { return }
            hole = (hole + 1) & mask
        }
        var next = (hole + 1) & mask
        while buckets[next] != Self.vacant {
            let moving = buckets[next]
            let homeOfMoving = home(of: keyAt(Int(moving))!)
            // It may fill the hole when the hole lies on its probe path (from its home up to `next`).
            if (next - homeOfMoving) & mask >= (next - hole) & mask {
                buckets[hole] = moving
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = Self.vacant
        count -= 1
    }

    private mutating func place(_ slot: Int32, key: SessionKey) {
        var bucket = home(of: key)
        while buckets[bucket] != Self.vacant { bucket = (bucket + 1) & mask }
        buckets[bucket] = slot
    }

    private mutating func grow(_ keyAt: (Int) -> SessionKey?) {
        let old = buckets
        buckets = Array(repeating: Self.vacant, count: Swift.max(16, old.count * 2))
        for slot in old where slot != Self.vacant { place(slot, key: keyAt(Int(slot))!) }
    }
}
