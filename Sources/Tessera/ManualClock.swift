public import Foundation

/// A clock that moves only when told to: for tests, with no real sleeps.
///
/// ```swift
/// let clock = ManualClock()
/// // ... the SDK schedules its heartbeat ...
/// await clock.waitForSleepers(count: 1)
/// clock.advance(by: .seconds(180))
/// ```
public final class ManualClock: TesseraClock {
    private struct Sleeper {
        var deadline: Date
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var nextID = 0
        var sleepers: [Int: Sleeper] = [:]
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state: Locked<State>

    /// Creates a manual clock.
    /// - Parameter now: The starting time.
    public init(now: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Locked(State(now: now))
    }

    public func now() -> Date { state.withLock { $0.now } }

    /// The deadlines of the sleepers waiting now, earliest first.
    public var sleeperDeadlines: [Date] {
        state.withLock { $0.sleepers.values.map(\.deadline).sorted() }
    }

    public func sleep(for duration: Duration) async throws {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Bool = state.withLock { state in
                    if Task.isCancelled { return true }
                    let deadline = state.now.addingTimeInterval(duration.timeInterval)
                    if deadline <= state.now { return true }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    let count = state.sleepers.count
                    let ready = state.waiters.filter { $0.count <= count }
                    state.waiters.removeAll { $0.count <= count }
                    for waiter in ready { waiter.continuation.resume() }
                    return false
                }
                if resumeNow {
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume()
                    }
                }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come.
    /// - Parameter duration: How far to move.
    public func advance(by duration: Duration) {
        advance(to: now().addingTimeInterval(duration.timeInterval))
    }

    /// Moves time to `date` (never backwards) and wakes every sleeper whose deadline has come.
    /// - Parameter date: The new time.
    public func advance(to date: Date) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = max(state.now, date)
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// The device's wall clock jumps, in either direction (a user sets the date): ``now()`` moves by
    /// `duration` and every sleeper keeps the time it has left, as sleeps on a monotonic clock do.
    /// - Parameter duration: How far the wall clock moves (negative: back).
    public func jump(by duration: Duration) {
        let delta = duration.timeInterval
        state.withLock { state in
            state.now = state.now.addingTimeInterval(delta)
            for id in state.sleepers.keys { state.sleepers[id]?.deadline.addTimeInterval(delta) }
        }
    }

    /// Returns once at least `count` tasks are sleeping on this clock.
    /// - Parameter count: How many sleepers to wait for.
    public func waitForSleepers(count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.sleepers.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
