import Foundation

/// Fans a current value out to any number of observers: a new observer gets the current value
/// first, and a value equal to the current one is never sent again.
final class StateBroadcaster<Value: Sendable & Equatable>: Sendable {
    private struct State {
        var current: Value
        var nextID = 0
        var observers: [Int: @Sendable (Value) -> Void] = [:]
    }

    private let state: Locked<State>

    init(_ initial: Value) {
        state = Locked(State(current: initial))
    }

    var current: Value { state.withLock { $0.current } }

    /// Publishes `value`; returns whether it was new (and so delivered).
    ///
    /// Observers are called under the lock, so every observer sees the values in publication order;
    /// they must only hand the value on (yield it, enqueue it), never call back into the broadcaster.
    @discardableResult
    func publish(_ value: Value) -> Bool {
        state.withLock { state in
            guard state.current != value else { return false }
            state.current = value
            for observer in state.observers.values { observer(value) }
            return true
        }
    }

    /// Registers `observer` and calls it at once with the current value.
    func addObserver(_ observer: @escaping @Sendable (Value) -> Void) -> Int {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.observers[id] = observer
            observer(state.current)
            return id
        }
    }

    func removeObserver(_ id: Int) {
        _ = state.withLock { $0.observers.removeValue(forKey: id) }
    }

    /// An `AsyncStream` of the current value and every later change.
    func stream() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .unbounded)
        let id = addObserver { continuation.yield($0) }
        continuation.onTermination = { [weak self] _ in self?.removeObserver(id) }
        return stream
    }
}

/// Fans one-off events out to the observers present when they happen.
final class EventBroadcaster<Event: Sendable>: Sendable {
    private struct State {
        var nextID = 0
        var continuations: [Int: AsyncStream<Event>.Continuation] = [:]
    }

    private let state = Locked(State())

    init() {}

    func publish(_ event: Event) {
        state.withLock { state in
            for continuation in state.continuations.values { continuation.yield(event) }
        }
    }

    func stream() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
        let id = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.continuations[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }
}
