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
        /// The session's monitor, kept across rests so it sees one continuous session.
        let monitor: (any EngineMonitor)?
        /// When the session was last admitted a call (or found busy by an eviction).
        var lastUsed: Timestamp
        /// Calls admitted and not yet returned from the engine.
        var inFlight = 0
        /// Bumped on every admitted call: an eviction that saw an older value gives up.
        var generation: UInt64 = 0
        var closing = false
        /// Neighbours in the recency list (resident engines only); -1 at either end.
        var older = -1
        var newer = -1

        var enabler: AccessEnabler? {
            if case .resident(let enabler, _) = form { return enabler }
            return nil
        }
    }

    /// A resident engine an eviction may put to rest, as it was when chosen.
    struct Candidate: Sendable {
        let key: SessionKey
        let enabler: AccessEnabler
        let generation: UInt64
    }

    private var entries: [Entry?] = []
    private var vacant: [Int] = []
    private var slots: [SessionKey: Int] = [:]
    private var oldest = -1
    private var newest = -1
    var statistics = SessionHostStatistics()
    var shuttingDown = false

    // MARK: - Lookup

    func slot(of key: SessionKey) -> Int? { slots[key] }

    subscript(slot: Int) -> Entry {
        get { entries[slot]! }
        _modify { yield &entries[slot]! }
    }

    /// The slot's entry if it still holds `enabler` resident.
    func slot(of key: SessionKey, holding enabler: AccessEnabler) -> Int? {
        guard let slot = slots[key], let resident = entries[slot]?.enabler, resident === enabler else { return nil }
        return slot
    }

    var residentEngines: [AccessEnabler] {
        var engines: [AccessEnabler] = []
        var slot = oldest
        while slot >= 0 {
            if let enabler = entries[slot]?.enabler { engines.append(enabler) }
            slot = entries[slot]!.newer
        }
        return engines
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
        slots[entry.key] = slot
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
        slots[entry.key] = nil
        entries[slot] = nil
        vacant.append(slot)
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
            slot = entry.newer
        }
        return found
    }

    // MARK: - Recency list

    private mutating func link(_ slot: Int) {
        entries[slot]!.older = newest
        entries[slot]!.newer = -1
        if newest >= 0 { entries[newest]!.newer = slot } else { oldest = slot }
        newest = slot
    }

    private mutating func unlink(_ slot: Int) {
        let (older, newer) = (entries[slot]!.older, entries[slot]!.newer)
        if older >= 0 { entries[older]!.newer = newer } else { oldest = newer }
        if newer >= 0 { entries[newer]!.older = older } else { newest = older }
        entries[slot]!.older = -1
        entries[slot]!.newer = -1
    }
}
