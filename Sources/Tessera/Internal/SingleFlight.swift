/// Requests in flight by key: a caller that needs what is already being asked for joins the task under
/// way instead of sending the request again.
///
/// A plain value owned by the actor that runs the tasks: the actor asks ``join(_:)`` first, and only when
/// that answers nil creates the task, records it with ``begin(_:_:)`` and removes it with ``end(_:)`` once
/// it is over.
struct SingleFlight<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private var tasks: [Key: Task<Value, any Error>] = [:]
    /// How many callers joined a task under way instead of starting one.
    private(set) var joins = 0

    /// Whether no task is under way.
    var isEmpty: Bool { tasks.isEmpty }

    /// Whether a task is under way for `key` (not counted as a join).
    func isRunning(_ key: Key) -> Bool { tasks[key] != nil }

    /// The task under way for `key`, counted as joined; nil when there is none (the caller starts one).
    mutating func join(_ key: Key) -> Task<Value, any Error>? {
        guard let task = tasks[key] else { return nil }
        joins += 1
        return task
    }

    /// Records the task just started for `key`.
    mutating func begin(_ key: Key, _ task: Task<Value, any Error>) {
        tasks[key] = task
    }

    /// Forgets the task of `key`: it is over (a later caller starts a new one).
    mutating func end(_ key: Key) {
        tasks[key] = nil
    }
}
