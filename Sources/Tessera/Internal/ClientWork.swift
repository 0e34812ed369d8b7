/// What the client is doing on its own: its shared requests (start, session checks, the anonymous
/// session; concurrent callers join one instead of sending another) and the tasks it started by itself.
///
/// Sendable, so that a copy can be read from outside the client (`await client.work.isWorking`).
struct ClientWork: Sendable {
    /// The key of the one start run.
    struct StartKey: Hashable {}

    /// A session check (`POST /v1/sessions/authenticate`): shared by callers under the same generation,
    /// for the same session and duration.
    struct AuthenticateKey: Hashable {
        var generation: UInt64
        var durationMinutes: Int?
        var sessionToken: String
    }

    /// The start run (store read, first session), shared by concurrent ``TesseraClient/start()`` calls.
    var start = SingleFlight<StartKey, Void>()
    /// Session checks in flight.
    var authenticate = SingleFlight<AuthenticateKey, StoredSession>()
    /// Anonymous-session requests in flight, by the generation they began under.
    var establish = SingleFlight<UInt64, StoredSession>()
    /// Tasks of the client's own under way (start, anonymous session, re-establishment, heartbeat tick,
    /// flush), each counted from its creation to its end.
    private(set) var ownTasks = 0
    /// Told the total of joins after each one, on the client (nil: nobody listens).
    var onJoin: (@Sendable (Int) -> Void)?

    /// Whether a start run is under way.
    var isStarting: Bool { start.isRunning(StartKey()) }

    /// How many callers joined a shared request under way.
    var joins: Int { start.joins + authenticate.joins + establish.joins }

    /// Whether the client is busy on its own: a task of its own is under way, or a session check has not
    /// been digested yet. False once everything it started has ended or waits on the clock (the heartbeat
    /// asleep).
    var isWorking: Bool { ownTasks > 0 || !authenticate.isEmpty }

    /// Joins the request of `key` in `flight` when one is under way (see ``SingleFlight/join(_:)``).
    mutating func join<Key, Value>(
        _ flight: WritableKeyPath<ClientWork, SingleFlight<Key, Value>>, _ key: Key
    ) -> Task<Value, any Error>? {
        guard let task = self[keyPath: flight].join(key) else { return nil }
        onJoin?(joins)
        return task
    }

    /// A task of the client's own was created.
    mutating func taskBegan() { ownTasks += 1 }

    /// A task of the client's own ended.
    mutating func taskEnded() { ownTasks -= 1 }
}
