import Synchronization

/// Coalesces concurrent point reads of one kind into one query.
///
/// Every request with a session credential starts with one indexed lookup. Sent one by one, each
/// lookup costs a pooled connection, a round trip and the driver's per-query work, far more than
/// the lookup itself. Here a read that arrives while ``maximumInFlight`` batches are already out
/// waits; when a batch comes back, everything that arrived meanwhile goes out as the next batch, in
/// one `= ANY($1)` query. An idle server sends a lone read at once, so batching adds no latency when
/// there is nothing to share; under load a read waits at most for the batch ahead of it. One batch
/// in flight (the default) measured the least CPU per read: each batch is as large as it can be.
///
/// A read never joins a batch that was already sent, so it always observes every write that was
/// acknowledged before it arrived: a session revoked through another node is refused at once.
final class PostgresReadBatcher<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// Reads the values of some keys; keys without a value are simply absent from the answer.
    typealias Fetch = @Sendable ([Key]) async throws -> [Key: Value]

    private struct Waiter {
        let key: Key
        let fetch: Fetch
        let continuation: CheckedContinuation<Value?, any Error>
    }

    private struct State {
        var waiting: [Waiter] = []
        var inFlight = 0
    }

    private let state = Mutex(State())
    /// The most batches out at once.
    let maximumInFlight: Int
    /// The most keys in one batch.
    let maximumBatch: Int

    init(maximumInFlight: Int = 1, maximumBatch: Int = 256) {
        precondition(maximumInFlight > 0 && maximumBatch > 0)
        self.maximumInFlight = maximumInFlight
        self.maximumBatch = maximumBatch
    }

    /// The value for `key`, read in a batch that was sent after this call began.
    ///
    /// A batch is read with the `fetch` of its first key; every caller passes an equivalent one.
    func load(_ key: Key, fetch: @escaping Fetch) async throws -> Value? {
        try await withCheckedThrowingContinuation { continuation in
            let batch = state.withLock { state -> [Waiter]? in
                state.waiting.append(Waiter(key: key, fetch: fetch, continuation: continuation))
                guard state.inFlight < maximumInFlight else { return nil }
                state.inFlight += 1
                return Self.take(&state, maximumBatch)
            }
            if let batch { send(batch) }
        }
    }

    private static func take(_ state: inout State, _ maximum: Int) -> [Waiter] {
        guard state.waiting.count > maximum else {
            defer { state.waiting.removeAll(keepingCapacity: true) }
            return state.waiting
        }
        let batch = Array(state.waiting.prefix(maximum))
        state.waiting.removeFirst(maximum)
        return batch
    }

    /// Sends `batch`, then, in the same task, every batch that queued up behind it.
    private func send(_ batch: [Waiter]) {
        Task {
            var batch = batch
            while true {
                var keys: [Key] = []
                keys.reserveCapacity(batch.count)
                var seen = Set<Key>(minimumCapacity: batch.count)
                for waiter in batch where seen.insert(waiter.key).inserted { keys.append(waiter.key) }
                do {
                    let values = try await batch[0].fetch(keys)
                    for waiter in batch { waiter.continuation.resume(returning: values[waiter.key]) }
                } catch {
                    for waiter in batch { waiter.continuation.resume(throwing: error) }
                }
                let next = state.withLock { state -> [Waiter]? in
                    guard !state.waiting.isEmpty else {
                        state.inFlight -= 1
                        return nil
                    }
                    return Self.take(&state, maximumBatch)
                }
                guard let next else { return }
                batch = next
            }
        }
    }
}
