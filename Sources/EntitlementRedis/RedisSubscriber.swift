import Foundation
import Synchronization

/// One `SUBSCRIBE`d connection on a thread of its own, handing each message published on a channel
/// to a handler. A broken connection is opened again (after a short pause) and subscribed again; what
/// was published in between is missed — subscribers must treat messages as hints, never as the truth.
final class RedisSubscriber: @unchecked Sendable {
    private let configuration: RedisConfiguration
    private let channel: String
    private let onMessage: @Sendable (String) -> Void
    private let stopped = Atomic<Bool>(false)
    /// How long one read waits before checking whether to stop.
    static let readSlice = Duration.milliseconds(200)

    /// Starts subscribing to `channel`; `onMessage` gets each message's payload, on the subscriber's thread.
    init(configuration: RedisConfiguration, channel: String, onMessage: @escaping @Sendable (String) -> Void) {
        self.configuration = configuration
        self.channel = channel
        self.onMessage = onMessage
        let thread = Thread { [self] in run() }
        thread.name = "entitle-redis-subscriber"
        thread.start()
    }

    /// Stops the thread (within one read slice) and closes its connection.
    func stop() { stopped.store(true, ordering: .relaxed) }

    private func run() {
        while !stopped.load(ordering: .relaxed) {
            do throws(RedisError) {
                let connection = try RedisConnection.open(configuration)
                _ = try connection.roundTrip(
                    RESPValue.command(["SUBSCRIBE", channel]), answers: 1, until: .now.advanced(by: configuration.commandTimeout))
                while !stopped.load(ordering: .relaxed) {
                    do throws(RedisError) {
                        let message = try connection.roundTrip([], answers: 1, until: .now.advanced(by: Self.readSlice))
                        // A published message: ["message", channel, payload].
                        if case .array(let parts?)? = message.first, parts.count == 3, parts[0].text == "message",
                            let payload = parts[2].text
                        {
                            onMessage(payload)
                        }
                    } catch .timeout {
                        continue  // nothing published in this slice; a partial message stays in the parser
                    }
                }
            } catch {
                Thread.sleep(forTimeInterval: 0.2)  // Redis is away: try again shortly
            }
        }
    }
}
