import EntitlementEngine
import Synchronization

extension SessionHostStatistics {
    /// One log line: what the host holds now, and what it did since `earlier` (the previous summary's
    /// statistics).
    public func summary(since earlier: SessionHostStatistics) -> String {
        "sessions: \(resident) resident, \(resting) resting; since the last summary: \(created - earlier.created) created, "
            + "\(evicted - earlier.evicted) put to rest, \(resumed - earlier.resumed) resumed, \(closed - earlier.closed) closed, "
            + "\(forgotten - earlier.forgotten) forgotten, \(refused - earlier.refused) calls refused"
    }

    /// The same counts as log metadata (totals since the host started).
    public var metadata: [String: String] {
        [
            "resident": "\(resident)", "resting": "\(resting)", "created": "\(created)", "evicted": "\(evicted)",
            "resumed": "\(resumed)", "closed": "\(closed)", "forgotten": "\(forgotten)", "refused": "\(refused)",
        ]
    }
}

extension SessionHost {
    /// Logs ``SessionHostStatistics/summary(since:)`` at `info` to `logger` every `interval` of the
    /// host's clock (at least a second) until the returned timer is cancelled or the host shuts down.
    /// This is the host's line at `info`: engines log their sessions' events at `debug`, so a million
    /// devices cost a line a minute, not a line each.
    @discardableResult
    public func logSummaries(every interval: Duration, to logger: any EngineLogHandler) -> ScheduledTimer {
        let loop = SummaryLoop(interval: max(interval, .seconds(1)), logger: logger)
        loop.scheduleNext(on: self, after: statistics)
        return ScheduledTimer { loop.stop() }
    }
}

/// One host's repeating summary: the timer pending, and whether it was stopped.
private final class SummaryLoop: Sendable {
    let interval: Duration
    let logger: any EngineLogHandler
    private let pending = Mutex<(timer: ScheduledTimer?, stopped: Bool)>((nil, false))

    init(interval: Duration, logger: any EngineLogHandler) {
        self.interval = interval
        self.logger = logger
    }

    func scheduleNext(on host: SessionHost, after earlier: SessionHostStatistics) {
        let timer = host.clock.schedule(at: host.clock.now().adding(interval)) { [weak host] in
            guard let host, !host.isShuttingDown else { return }
            let now = host.statistics
            self.logger.log(level: .info, message: now.summary(since: earlier), metadata: now.metadata)
            self.scheduleNext(on: host, after: now)
        }
        pending.withLock { pending in
            if pending.stopped { timer.cancel() } else { pending.timer = timer }
        }
    }

    func stop() {
        pending.withLock { pending in
            pending.stopped = true
            pending.timer?.cancel()
            pending.timer = nil
        }
    }
}
