import Synchronization

/// Expires database operations that outlive their deadline, all checked by one sweeper.
///
/// An operation on a connection that died without a word (a network partition, a frozen server)
/// would otherwise wait for TCP to give up, minutes later. A timer per operation did the job but
/// cost more CPU than the query itself (two tasks and a dispatch timer per call); here an operation
/// costs one locked insert and one locked removal, and ``run()`` wakes every ``resolution`` to
/// expire the overdue ones. An operation therefore answers at most one resolution after its deadline.
/// With no operation registered the sweeper parks until the next one is (an idle server does not
/// wake ten times a second).
final class OperationWatchdog: Sendable {
    private struct Entry {
        var deadline: ContinuousClock.Instant
        var expire: @Sendable () -> Void
    }

    private struct State {
        var nextID: UInt64 = 0
        var entries: [UInt64: Entry] = [:]
        /// The sweeper, parked while no operation is registered.
        var parked: CheckedContinuation<Void, Never>?
        var cancelled = false
    }

    private let state = Mutex(State())
    /// How often ``run()`` looks for overdue operations.
    let resolution: Duration

    init(resolution: Duration = .milliseconds(100)) {
        self.resolution = resolution
    }

    /// Registers an operation; `expire` is called once, from the sweeper, if it is still registered
    /// after `deadline`. Returns the ID that ``finish(_:)`` takes.
    func register(deadline: ContinuousClock.Instant, expire: @escaping @Sendable () -> Void) -> UInt64 {
        let (id, parked) = state.withLock { state in
            state.nextID &+= 1
            state.entries[state.nextID] = Entry(deadline: deadline, expire: expire)
            defer { state.parked = nil }
            return (state.nextID, state.parked)
        }
        parked?.resume()
        return id
    }

    /// Unregisters a finished operation (nothing happens if it had already expired).
    func finish(_ id: UInt64) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    /// The number of operations registered and not yet finished or expired.
    var pending: Int { state.withLock { $0.entries.count } }

    /// Expires the overdue operations now; returns how many.
    @discardableResult
    func sweep(now: ContinuousClock.Instant = .now) -> Int {
        let overdue = state.withLock { state -> [Entry] in
            let ids = state.entries.compactMap { $0.value.deadline <= now ? $0.key : nil }
            return ids.compactMap { state.entries.removeValue(forKey: $0) }
        }
        for entry in overdue { entry.expire() }
        return overdue.count
    }

    /// Sweeps every ``resolution`` until the task is cancelled, then expires whatever is left.
    func run() async {
        while !Task.isCancelled {
            await parkWhileIdle()
            do { try await Task.sleep(for: resolution) } catch { break }
            sweep()
        }
        sweep(now: .now + .seconds(86_400 * 365))
    }

    /// Returns at once while operations are registered; otherwise when one is, or on cancellation.
    private func parkWhileIdle() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resume = state.withLock { state -> Bool in
                    if !state.entries.isEmpty || state.cancelled { return true }
                    state.parked = continuation
                    return false
                }
                if resume { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.cancelled = true
                defer { state.parked = nil }
                return state.parked
            }?.resume()
        }
    }
}
