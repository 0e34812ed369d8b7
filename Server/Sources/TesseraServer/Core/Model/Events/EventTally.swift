import Synchronization

/// How many events of each type a store has committed since it opened: the metrics' source.
///
/// Counted once per committed transaction that wrote events (one uncontended lock), never per read;
/// ``ServerMetrics`` turns it into `tessera_events_written_total` when `/metrics` is scraped.
public final class EventTally: Sendable {
    private let counts = Mutex<[EventType: Int]>([:])

    public init() {}

    /// Counts the events of a committed transaction.
    func add(_ types: [EventType]) {
        guard !types.isEmpty else { return }
        counts.withLock { counts in
            for type in types { counts[type, default: 0] += 1 }
        }
    }

    /// The counts so far, by type.
    public func snapshot() -> [EventType: Int] { counts.withLock { $0 } }
}

/// The event types one transaction (one attempt of it) appended, counted when it commits.
final class EventCollector: Sendable {
    /// The collector of the transaction the current task runs, if any.
    @TaskLocal static var current: EventCollector?

    private let types = Mutex<[EventType]>([])

    func add(_ batch: EventBatch) {
        types.withLock { $0 += batch.drafts.map(\.type) }
    }

    var collected: [EventType] { types.withLock { $0 } }
}
