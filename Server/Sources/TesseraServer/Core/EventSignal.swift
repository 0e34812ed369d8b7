import Synchronization

/// Wakes what waits for this process's commits (the webhook dispatcher): raised by the store after
/// each commit that wrote events or queued webhook deliveries.
///
/// A waiter parks on a continuation, with no timer but its own long fallback: it costs nothing
/// while the server is idle. Each raise moves a generation on; a waiter passes the generation it
/// last saw, so a commit that landed while it was busy wakes it at once (nothing is lost between a
/// pass and the next wait).
public final class EventSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// Called with the number of parked waiters each time one parks (tests).
        var onPark: (@Sendable (Int) -> Void)?
    }

    private let state = Mutex(State())

    public init() {}

    /// The number of raises so far; pass it to ``wait(after:timeout:)``.
    public var generation: UInt64 { state.withLock { $0.generation } }

    /// How many waiters are parked now.
    public var parked: Int { state.withLock { $0.waiters.count } }

    /// Wakes every parked waiter; a later ``wait(after:timeout:)`` with an older generation returns at once.
    func raise() {
        let waiters = state.withLock { state in
            state.generation &+= 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns when the generation has moved past `seen`, after `timeout`, or when the task is cancelled.
    public func wait(after seen: UInt64, timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.park(after: seen) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Calls `body` with the number of parked waiters whenever one parks (for tests that assert a
    /// waiter sleeps).
    func onPark(_ body: (@Sendable (Int) -> Void)?) {
        state.withLock { $0.onPark = body }
    }

    private func park(after seen: UInt64) async {
        let id = state.withLock { state in
            state.nextID &+= 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Under the lock: a cancellation handler that ran before this finds nothing to resume,
                // but the task's cancelled flag is already set when it runs, so this sees it.
                let parked = state.withLock { state -> (count: Int, onPark: (@Sendable (Int) -> Void)?)? in
                    if state.generation != seen || Task.isCancelled { return nil }
                    state.waiters[id] = continuation
                    return (state.waiters.count, state.onPark)
                }
                guard let parked else { return continuation.resume() }
                parked.onPark?(parked.count)
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
