import Foundation

/// The heartbeat's schedule and bookkeeping: its loop, when the next tick is due, the backoff after
/// failures, the retries of the anonymous session, and the re-establishment of a session that ended.
///
/// A plain value owned by ``TesseraClient``, which runs the loop and the ticks: this type only decides
/// delays and keeps the serials that tell which re-establishment is the newest.
struct Heartbeat {
    /// Whether ``TesseraClient/start()`` is flushing the queued revocations (one flush at a time).
    var isFlushingAtStart = false
    /// How a tick went.
    enum TickOutcome: Equatable {
        case done
        case transientFailure(retryAfter: Duration?)
    }

    /// The loop's failed ticks in a row, and the delay the server last asked for.
    struct Backoff: Equatable {
        private(set) var failures = 0
        private(set) var retryAfter: Duration?

        /// Counts a tick: a success clears the failures, and so does the failure after `maxAttempts` of them
        /// (the normal interval resumes).
        mutating func record(_ outcome: TickOutcome, maxAttempts: Int) {
            switch outcome {
            case .done:
                failures = 0
                retryAfter = nil
            case .transientFailure(let after):
                failures += 1
                retryAfter = after
                if failures > maxAttempts {
                    failures = 0
                    retryAfter = nil
                }
            }
        }
    }

    /// The heartbeat loop, while it runs.
    var maintenanceTask: Task<Void, Never>?
    /// When the last tick (or session answer) happened.
    var lastAttemptAt: Date?
    /// Whether the app is in the background (the loop is paused).
    var isInBackground = false
    /// Whether the loop should establish a session when there is none.
    var autoEstablish = true
    /// The re-establishment of a session that ended, while it runs.
    private(set) var reestablishTask: Task<Void, Never>?
    /// Bumped for each re-establishment; only the newest one clears ``reestablishTask`` when it ends.
    private(set) var reestablishSerial: UInt64 = 0
    /// Failed attempts in a row to create an anonymous session, and whether the last failure was permanent.
    private(set) var establishFailures = 0
    private(set) var establishFailureIsPermanent = false

    /// Starts a re-establishment: `start` gets its serial and returns its task, which tells
    /// ``reestablishmentEnded(serial:)`` when it is over.
    mutating func beginReestablishment(_ start: (_ serial: UInt64) -> Task<Void, Never>) {
        reestablishSerial &+= 1
        reestablishTask = start(reestablishSerial)
    }

    /// The re-establishment of `serial` is over (or no longer blocks the heartbeat): forgotten when it is
    /// the newest.
    mutating func reestablishmentEnded(serial: UInt64) {
        if serial == reestablishSerial { reestablishTask = nil }
    }

    /// Forgets the re-establishment under way (a reset decides the session now).
    mutating func dropReestablishment() {
        reestablishTask = nil
    }

    /// An anonymous session was created (or a session applied): retries start over.
    mutating func establishSucceeded() {
        establishFailures = 0
        establishFailureIsPermanent = false
    }

    /// Counts a failed anonymous session; answers the count when the failure is permanent (the app is told).
    mutating func establishFailed(isTransient: Bool) -> Int? {
        establishFailures += 1
        establishFailureIsPermanent = !isTransient
        return establishFailureIsPermanent ? establishFailures : nil
    }

    /// The delay before the next tick, given the loop's backoff and the client's state.
    func nextDelay(
        _ backoff: Backoff, state: PersistedState?, clock: any TesseraClock, configuration: TesseraConfiguration
    ) -> Duration {
        if let state, state.session == nil, autoEstablish, reestablishTask == nil {
            return establishRetryDelay(retryAfter: backoff.retryAfter, configuration: configuration)
        }
        if backoff.failures > 0 {
            let delay = configuration.backoff.delay(attempt: backoff.failures - 1, random: configuration.random())
            if let retryAfter = backoff.retryAfter, retryAfter > delay { return retryAfter }
            return delay
        }
        guard let state else { return configuration.backoff.delay(attempt: 0, random: configuration.random()) }
        let interval = Self.jitteredInterval(configuration)
        guard let current = state.session else { return interval }
        let last = max(current.lastValidatedAt, lastAttemptAt ?? current.lastValidatedAt)
        let due = last.addingTimeInterval(interval.timeInterval)
        // Never more than one interval: a device clock set back (by years) puts `last` in the future.
        let wait = min(due.timeIntervalSince(clock.now()), interval.timeInterval)
        return wait > 0 ? .milliseconds(Int64((wait * 1000).rounded())) : .zero
    }

    /// The delay before the next attempt to create an anonymous session: soon for the first one, with
    /// exponential backoff after transient failures, and the heartbeat interval after a permanent failure or
    /// once `maxAttempts` retries failed. The count of failures in a row is kept across those cycles (a
    /// wrong publishable key is not retried every few seconds forever).
    func establishRetryDelay(retryAfter: Duration?, configuration: TesseraConfiguration) -> Duration {
        let delay: Duration
        if establishFailures == 0 {
            delay = configuration.backoff.delay(attempt: 0, random: configuration.random())
        } else if establishFailureIsPermanent || establishFailures > configuration.backoff.maxAttempts {
            delay = Self.jitteredInterval(configuration)
        } else {
            delay = configuration.backoff.delay(attempt: establishFailures - 1, random: configuration.random())
        }
        if let retryAfter, retryAfter > delay { return retryAfter }
        return delay
    }

    /// The heartbeat interval with ±jitter: `interval × (1 + jitter × (2r − 1))`, r in 0 ..< 1.
    static func jitteredInterval(_ configuration: TesseraConfiguration) -> Duration {
        let factor = 1 + configuration.heartbeatJitter * (2 * configuration.random() - 1)
        return .milliseconds(Int64((configuration.heartbeatInterval.timeInterval * factor * 1000).rounded()))
    }
}
