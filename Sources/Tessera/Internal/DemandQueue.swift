/// The demand bookkeeping of one publisher subscription, without Combine: values wait in order until
/// the subscriber has asked for them; nothing is handed out after cancellation.
///
/// Demand is a count, or unlimited (`nil` in ``request(_:)``, as `Subscribers.Demand.max` reads it);
/// counts add up and saturate at unlimited.
struct DemandQueue<Value> {
    /// Values still owed: nil when unlimited.
    private(set) var outstanding: Int? = 0
    private(set) var buffer: [Value] = []
    private(set) var isCancelled = false

    /// Adds demand: `count` more values, or unlimited when nil.
    mutating func request(_ count: Int?) {
        guard !isCancelled, let current = outstanding else { return }
        guard let count else {
            outstanding = nil
            return
        }
        let (sum, overflow) = current.addingReportingOverflow(max(count, 0))
        outstanding = overflow || sum == .max ? nil : sum
    }

    /// Queues a value (dropped after cancellation).
    mutating func enqueue(_ value: Value) {
        guard !isCancelled else { return }
        buffer.append(value)
    }

    /// The next value to deliver, when one is queued and demanded; counts it against the demand.
    mutating func next() -> Value? {
        guard !isCancelled, !buffer.isEmpty else { return nil }
        switch outstanding {
        case nil:
            return buffer.removeFirst()
        case let count? where count > 0:
            outstanding = count - 1
            return buffer.removeFirst()
        default:
            return nil
        }
    }

    /// Stops everything: the buffer is dropped and no value is handed out again.
    mutating func cancel() {
        isCancelled = true
        buffer = []
        outstanding = 0
    }
}
