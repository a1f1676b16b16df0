import EntitlementEngine
import Foundation
import Synchronization

/// One subscribed connection on a thread of its own, handing each message published on its channels
/// to a handler: `SUBSCRIBE` (classic pub/sub, a standalone server) or `SSUBSCRIBE` (sharded pub/sub,
/// one cluster node's slots). What is published while it is not subscribed is missed — subscribers
/// must treat messages as hints, never as the truth.
///
/// A subscriber that ``reconnects`` opens its connection again after a short pause when it breaks,
/// forever; one that does not ends instead — on a broken connection, an error answer (`MOVED`: the node
/// no longer serves a slot) or a channel the server unsubscribed (`sunsubscribe`: its slot moved away) —
/// and says so through `onEnd`, for ``RedisClusterSubscriber`` to read the cluster's map again.
final class RedisSubscriber: @unchecked Sendable {
    private let configuration: RedisConfiguration
    private let commands: [[String]]
    private let reconnects: Bool
    private let metrics: (any EngineMetricsHandler)?
    private let onMessage: @Sendable (String) -> Void
    private let onEnd: @Sendable () -> Void
    private let stopped = Atomic<Bool>(false)
    /// How long one read waits before checking whether to stop.
    static let readSlice = Duration.milliseconds(200)

    /// Starts subscribing with `commands` (each `SUBSCRIBE`/`SSUBSCRIBE` and its channels);
    /// `onMessage` gets each message's payload, `onEnd` is called once if it ends without ``stop()``;
    /// both on the subscriber's thread.
    init(
        configuration: RedisConfiguration, commands: [[String]], reconnects: Bool, metrics: (any EngineMetricsHandler)? = nil,
        onMessage: @escaping @Sendable (String) -> Void, onEnd: @escaping @Sendable () -> Void = {}
    ) {
        self.configuration = configuration
        self.metrics = metrics
        self.commands = commands
        self.reconnects = reconnects
        self.onMessage = onMessage
        self.onEnd = onEnd
        let thread = Thread { [self] in run() }
        thread.name = "entitle-redis-subscriber"
        thread.start()
    }

    /// Stops the thread (within one read slice) and closes its connection.
    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Whether the subscriber ended or was stopped.
    var hasEnded: Bool { stopped.load(ordering: .relaxed) }

    private func run() {
        while !stopped.load(ordering: .relaxed) {
            do throws(RedisError) {
                try listen()
            } catch {
                if !reconnects { break }
                metrics?.increment(counter: "entitle.redis.subscriber.reconnects", dimensions: [], by: 1)
                Thread.sleep(forTimeInterval: 0.2)  // Redis is away: try again shortly
            }
        }
        // A subscriber that does not reconnect ends here, told or not; `onEnd` only when not told.
        if !stopped.exchange(true, ordering: .relaxed) { onEnd() }
    }

    /// Subscribes on a new connection and hands over messages until stopped (returns) or the
    /// subscription is lost (throws).
    private func listen() throws(RedisError) {
        let connection = try RedisConnection.open(configuration)
        let bytes = commands.flatMap(RESPValue.command)
        _ = try connection.roundTrip(bytes, answers: 0, until: .now.advanced(by: configuration.commandTimeout))
        while !stopped.load(ordering: .relaxed) {
            let answer: RESPValue?
            do throws(RedisError) {
                answer = try connection.roundTrip([], answers: 1, until: .now.advanced(by: Self.readSlice)).first
            } catch .timeout {
                continue  // nothing published in this slice; a partial message stays in the parser
            }
            switch answer {
            // A published message: ["message" or "smessage", channel, payload].
            case .array(let parts?)? where parts.count == 3 && (parts[0].text == "message" || parts[0].text == "smessage"):
                if let payload = parts[2].text { onMessage(payload) }
            case .array(let parts?)? where parts.first?.text == "sunsubscribe":
                throw .server("a channel's slot moved to another node")
            case .error(let message)?:
                throw .answer(message)
            default:
                continue  // a subscription confirmed
            }
        }
    }
}
