import Synchronization

/// One copy of each requestor's configuration per process: engines configured for the same requestor
/// share its MVPD list (a value type whose storage is shared on copy) instead of each keeping its own,
/// which is most of a resting session's memory in a host with many devices.
///
/// A configuration that differs from the one kept (the requestor's MVPDs changed) replaces it; engines
/// holding the old one keep theirs. At most ``limit`` requestors are kept (the table starts over past
/// it), so odd requestor ids cannot grow it without bound.
enum SharedConfigurations {
    /// The most requestors kept at once.
    static let limit = 1024

    private static let table = Mutex<[String: RequestorConfiguration]>([:])

    /// `configuration`, or the equal one already kept (sharing its storage).
    static func share(_ configuration: RequestorConfiguration) -> RequestorConfiguration {
        table.withLock { table in
            if let kept = table[configuration.requestorID], kept == configuration { return kept }
            if table.count >= limit { table.removeAll() }
            table[configuration.requestorID] = configuration
            return configuration
        }
    }
}
