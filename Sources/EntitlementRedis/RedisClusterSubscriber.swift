import Synchronization

/// Sharded pub/sub across a Redis Cluster: one channel per slot (`channel(slot)`, which must hash to
/// that slot), subscribed with `SSUBSCRIBE` on the master serving it — one ``RedisSubscriber`` per
/// master, holding all its slots' channels — so a message published beside a key (`SPUBLISH` in the
/// script that wrote it) reaches this node from whichever master holds the key, and no message goes to
/// every node of the cluster as classic `PUBLISH` does.
///
/// It follows the cluster: a task reads the map when a master's subscription ends (the node died or
/// hung, a slot moved away — `sunsubscribe` — or an error answer such as `MOVED`) and every
/// ``mapCheckInterval``, and subscribes again wherever a master's slots changed. Messages published
/// while a subscription moves are missed: they are hints.
final class RedisClusterSubscriber: Sendable {
    /// How often the map is read when nothing ended (a slot can move without ending a subscription:
    /// to a master that had none).
    static let mapCheckInterval = Duration.seconds(5)
    /// The shortest time between two reads of the map (a node refusing at once must not spin the task).
    static let pauseBetweenReads = Duration.milliseconds(200)

    private let cluster: RedisClusterClient
    private let channel: @Sendable (Int) -> String
    private let onMessage: @Sendable (String) -> Void
    private let state = Mutex(State())

    private struct State {
        /// A master's subscription, and the slots it holds.
        var subscriptions: [String: (slots: [Int], subscriber: RedisSubscriber)] = [:]
        /// Whether a subscription ended since the last read of the map.
        var ended = false
        var stopped = false
        var following: Task<Void, Never>?
    }

    /// Starts following `cluster`'s masters; `onMessage` gets each payload, on a subscriber's thread.
    init(cluster: RedisClusterClient, channel: @escaping @Sendable (Int) -> String, onMessage: @escaping @Sendable (String) -> Void) {
        self.cluster = cluster
        self.channel = channel
        self.onMessage = onMessage
        // The task holds the subscriber only between waits, so letting it go stops it (deinit).
        let following = Task { [weak self] in
            while true {
                let owners = try? await cluster.readMap()
                do {
                    guard let subscriber = self, !subscriber.isStopped else { return }
                    if let owners { subscriber.subscribe(to: owners) }
                }
                var waited = Duration.zero
                repeat {
                    try? await Task.sleep(for: .milliseconds(100))
                    waited += .milliseconds(100)
                    guard let subscriber = self, !subscriber.isStopped else { return }
                    if waited >= Self.pauseBetweenReads, subscriber.state.withLock({ $0.ended }) { break }
                } while waited < Self.mapCheckInterval
            }
        }
        state.withLock { $0.following = following }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    /// Stops every subscription and the task that follows the map.
    func stop() {
        let (subscribers, following) = state.withLock { state -> ([RedisSubscriber], Task<Void, Never>?) in
            state.stopped = true
            defer { state.subscriptions.removeAll() }
            return (state.subscriptions.values.map(\.subscriber), state.following)
        }
        for subscriber in subscribers { subscriber.stop() }
        following?.cancel()
    }

    deinit { stop() }

    /// Makes the subscriptions match `owners` (the master of every slot): a master whose slots changed,
    /// or whose subscription ended, subscribes anew; one that serves none any more stops.
    private func subscribe(to owners: [String]) {
        var slotsByMaster: [String: [Int]] = [:]
        for (slot, owner) in owners.enumerated() where !owner.isEmpty { slotsByMaster[owner, default: []].append(slot) }
        var stale: [RedisSubscriber] = []
        state.withLock { state in
            state.ended = false
            for (address, subscription) in state.subscriptions
            where slotsByMaster[address] != subscription.slots || subscription.subscriber.hasEnded {
                if subscription.subscriber.hasEnded {
                    cluster.metrics?.increment(counter: "entitle.redis.subscriber.reconnects", dimensions: [], by: 1)
                }
                stale.append(subscription.subscriber)
                state.subscriptions[address] = nil
            }
            guard !state.stopped else { return }
            for (address, slots) in slotsByMaster where state.subscriptions[address] == nil {
                guard let configuration = try? cluster.configuration(ofNode: address) else { continue }
                let subscriber = RedisSubscriber(
                    configuration: configuration, commands: slots.map { ["SSUBSCRIBE", channel($0)] }, reconnects: false,
                    onMessage: onMessage, onEnd: { [weak self] in self?.state.withLock { $0.ended = true } })
                state.subscriptions[address] = (slots, subscriber)
            }
        }
        for subscriber in stale { subscriber.stop() }
    }
}
