import Foundation

/// Exponential backoff with real jitter, for retries after transient failures.
///
/// The n-th retry (n from 0) waits `initial × multiplier^n`, capped at `maximum`, then multiplied by
/// a random factor in `1 ± jitter`. After `maxAttempts` failed retries the heartbeat goes back to its
/// normal interval.
public struct BackoffPolicy: Sendable, Hashable {
    /// The first delay.
    public var initial: Duration
    /// The growth factor per attempt.
    public var multiplier: Double
    /// The largest delay before jitter.
    public var maximum: Duration
    /// The relative jitter, 0 ... 1.
    public var jitter: Double
    /// How many retries in a row before falling back to the normal schedule.
    public var maxAttempts: Int

    /// Creates a backoff policy.
    /// - Parameters:
    ///   - initial: The first delay (2 s).
    ///   - multiplier: The growth factor (2).
    ///   - maximum: The cap before jitter (5 min).
    ///   - jitter: The relative jitter (±50 %).
    ///   - maxAttempts: Retries in a row before the normal schedule resumes (5).
    public init(
        initial: Duration = .seconds(2), multiplier: Double = 2, maximum: Duration = .seconds(300),
        jitter: Double = 0.5, maxAttempts: Int = 5
    ) {
        self.initial = initial
        self.multiplier = multiplier
        self.maximum = maximum
        self.jitter = min(max(jitter, 0), 1)
        self.maxAttempts = max(maxAttempts, 1)
    }

    /// The delay before retry number `attempt` (0-based), given a random number in `0 ..< 1`.
    /// - Parameters:
    ///   - attempt: The retry number, from 0.
    ///   - random: A random number in `0 ..< 1`.
    public func delay(attempt: Int, random: Double) -> Duration {
        let base = min(
            initial.timeInterval * pow(multiplier, Double(max(attempt, 0))), maximum.timeInterval)
        let factor = 1 + jitter * (2 * random - 1)
        return .milliseconds(Int64((base * factor * 1000).rounded()))
    }
}
