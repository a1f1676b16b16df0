import EntitlementEngine

/// The host's sessions, guarded by the host's lock: one entry per key in a slot array, resident
/// engines linked from least to most recently used (by slot index, so touching one is O(1)).
struct SessionRegistry {
    /// A session in memory as an engine, or resting as a value.
    enum Form {
        case resident(AccessEnabler, SessionRelay)
        case resting(EngineRest)
    }

    struct Entry {
        let key: SessionKey
        var form: Form
        /// The session's monitor, kept across rests so it sees one continuous session (boxed: most
        /// sessions have none, and an existential inline would be 40 bytes of every entry).
        let monitorBox: MonitorBox?
        /// When the session was last admitted a call (or found busy by an eviction).
        var lastUsed: Timestamp
        /// Bumped on every admitted call: an eviction that saw an older value gives up.
        var generation: UInt64 = 0
        /// Calls admitted and not yet returned from the engine (at most the mailbox limit).
        var inFlight: Int32 = 0
        /// Neighbours in the recency list (resident engines only); -1 at either end.
        var older: Int32 = -1
        var newer: Int32 = -1
        var closing = false

        init(key: SessionKey, form: Form, monitor: (any EngineMonitor)?, lastUsed: Timestamp) {
            self.key = key
            self.form = form
            self.monitorBox = monitor.map(MonitorBox.init)
            self.lastUsed = lastUsed
        }

        var monitor: (any EngineMonitor)? { monitorBox?.monitor }

        var enabler: AccessEnabler? {
            if case .resident(let enabler, _) = form { return enabler }
            return nil
        }
    }

    final class MonitorBox: Sendable {
        let monitor: any EngineMonitor
        init(_ monitor: any EngineMonitor) { self.monitor = monitor }
    }

    /// A resident engine an eviction may put to rest, as it was when chosen.
    struct Candidate: Sendable {
        let key: SessionKey
        let enabler: AccessEnabler
        let generation: UInt64
    }

    private var entries: [Entry?] = []
    private var vacant: [Int] = []
    private var index = SessionIndex()
    private var oldest = -1
    private var newest = -1
    var statistics = SessionHostStatistics()
    var shuttingDown = false

    // MARK: - Lookup

    func slot(of key: SessionKey) -> Int? { index.slot(of: key) { entries[$0]?.key } }

    subscript(slot: Int) -> Entry {
        get { entries[slot]! }
        _modify { yield &entries[slot]! }
    }

    /// The slot's entry if it still holds `enabler` resident.
    func slot(of key: SessionKey, holding enabler: AccessEnabler) -> Int? {
        guard let slot = slot(of: key), let resident = entries[slot]?.enabler, resident === enabler else { return nil }
        return slot
    }

    var residentEngines: [AccessEnabler] {
        var engines: [AccessEnabler] = []
        var slot = oldest
        while slot >= 0 {
            if let enabler = entries[slot]?.enabler { engines.append(enabler) }
            slot = Int(entries[slot]!.newer)
        }
        return engines
    }

    /// The slots of resting sessions whose rest matches `condition`.
    func restingSlots(where condition: (EngineRest) -> Bool) -> [Int] {
        entries.indices.filter { slot in
            if case .resting(let rest)? = entries[slot]?.form { return condition(rest) }
            return false
        }
    }

    // MARK: - Changes

    /// Adds a resident session as the most recently used.
    mutating func insert(_ entry: Entry) -> Int {
        let slot: Int
        if let reused = vacant.popLast() {
            slot = reused
            entries[slot] = entry
        } else {
            slot = entries.count
            entries.append(entry)
        }
        index.insert(slot) { entries[$0]?.key }
        link(slot)
        statistics.resident += 1
        return slot
    }

    mutating func remove(_ slot: Int) {
        guard let entry = entries[slot] else { return }
        if entry.enabler != nil {
            unlink(slot)
            statistics.resident -= 1
        } else {
            statistics.resting -= 1
        }
        index.remove(slot) { entries[$0]?.key }
        entries[slot] = nil
        vacant.append(slot)
    }

    /// Removes the resting sessions last used at or before `cutoff` that hold nothing; returns how many.
    mutating func forgetEmpty(usedBefore cutoff: Timestamp) -> Int {
        var forgotten = 0
        for slot in entries.indices {
            guard let entry = entries[slot], entry.lastUsed <= cutoff, !entry.closing, entry.inFlight == 0,
                case .resting(let rest) = entry.form, rest.holdsNothing
            else { continue }
            remove(slot)
            forgotten += 1
        }
        statistics.forgotten += forgotten
        compactIfSparse()
        return forgotten
    }

    /// Removes every resting session and every resident one whose engine is in `settled` (a
    /// shutdown's end); returns how many it removed.
    mutating func removeAll(restingOr settled: Set<ObjectIdentifier>) -> Int {
        var removed = 0
        for slot in entries.indices {
            guard let entry = entries[slot] else { continue }
            if let enabler = entry.enabler, !settled.contains(ObjectIdentifier(enabler)) { continue }
            remove(slot)
            removed += 1
        }
        statistics.closed += removed
        compactIfSparse()
        return removed
    }

    /// Marks the session used now: it becomes the most recently used resident engine.
    mutating func touch(_ slot: Int, at now: Timestamp) {
        entries[slot]!.lastUsed = now
        guard entries[slot]!.enabler != nil else { return }
        unlink(slot)
        link(slot)
    }

    mutating func putToRest(_ slot: Int, _ rest: EngineRest) {
        unlink(slot)
        entries[slot]!.form = .resting(rest)
        statistics.resident -= 1
        statistics.resting += 1
        statistics.evicted += 1
    }

    mutating func resume(_ slot: Int, as enabler: AccessEnabler, _ relay: SessionRelay) {
        entries[slot]!.form = .resident(enabler, relay)
        link(slot)
        statistics.resting -= 1
        statistics.resident += 1
        statistics.resumed += 1
    }

    // MARK: - Eviction candidates

    /// Resident engines at the old end of the list, oldest first, that no call is using: those used
    /// last at or before `cutoff` (idle), and at most `limit` of them; `sparing` is never chosen.
    func candidates(usedBefore cutoff: Timestamp, limit: Int, sparing: Int = -1) -> [Candidate] {
        var found: [Candidate] = []
        var slot = oldest
        while slot >= 0, found.count < limit {
            let entry = entries[slot]!
            guard entry.lastUsed <= cutoff else { break }
            if slot != sparing, entry.inFlight == 0, !entry.closing, let enabler = entry.enabler {
                found.append(Candidate(key: entry.key, enabler: enabler, generation: entry.generation))
            }
            slot = Int(entry.newer)
        }
        return found
    }

    /// Packs the live entries into fresh tables when three quarters of the slots or more are vacant
    /// (after many sessions were forgotten or closed), so the host's own tables shrink with its
    /// sessions instead of staying at their peak. Slots are renumbered: none is held across a lock.
    private mutating func compactIfSparse() {
        let live = entries.count - vacant.count
        guard entries.count >= 1_024, live * 4 <= entries.count else { return }
        var renumbered = [Int32](repeating: -1, count: entries.count)
        var packed: [Entry?] = []
        packed.reserveCapacity(live)
        for (slot, entry) in entries.enumerated() where entry != nil {
            renumbered[slot] = Int32(packed.count)
            packed.append(entry)
        }
        for slot in packed.indices {
            if packed[slot]!.older >= 0 { packed[slot]!.older = renumbered[Int(packed[slot]!.older)] }
            if packed[slot]!.newer >= 0 { packed[slot]!.newer = renumbered[Int(packed[slot]!.newer)] }
        }
        oldest = oldest >= 0 ? Int(renumbered[oldest]) : -1
        newest = newest >= 0 ? Int(renumbered[newest]) : -1
        entries = packed
        vacant = []
        index = SessionIndex()
        for slot in entries.indices { index.insert(slot) { entries[$0]?.key } }
    }

    // MARK: - Recency list

    private mutating func link(_ slot: Int) {
        entries[slot]!.older = Int32(newest)
        entries[slot]!.newer = -1
        if newest >= 0 { entries[newest]!.newer = Int32(slot) } else { oldest = slot }
        newest = slot
    }

    private mutating func unlink(_ slot: Int) {
        let (older, newer) = (Int(entries[slot]!.older), Int(entries[slot]!.newer))
        if older >= 0 { entries[older]!.newer = Int32(newer) } else { oldest = newer }
        if newer >= 0 { entries[newer]!.older = Int32(older) } else { newest = older }
        entries[slot]!.older = -1
        entries[slot]!.newer = -1
    }
}
