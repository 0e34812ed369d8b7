public import Foundation

/// The SDK's source of time: the wall clock for expiry decisions, and sleeping for the heartbeat
/// and backoff. Inject ``ManualClock`` in tests to run time by hand.
public protocol TesseraClock: Sendable {
    /// The current wall-clock time.
    func now() -> Date
    /// Suspends for `duration`; throws `CancellationError` when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The real clock: `Date()` and `Task.sleep`.
public struct SystemClock: TesseraClock {
    /// Creates the system clock.
    public init() {}

    public func now() -> Date { Date() }

    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}
