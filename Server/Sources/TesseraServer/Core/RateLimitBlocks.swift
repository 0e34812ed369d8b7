import Synchronization

/// The counters this process knows to be at their limit, until their window ends.
///
/// The shared store holds the counts; this map only remembers what the store answered, so a
/// blocked client is refused before any database work (and the hot paths pay one atomic load
/// while nothing is blocked). Each node lets at most one more attempt through after the shared
/// count reached the limit: that attempt's own count tells it. At most `capacity` keys are kept;
/// when full, the block that ends soonest is forgotten (the store still counts it). A block holds
/// only while the limit is not raised above the one that caused it (a project's settings changed).
final class RateLimitBlocks: Sendable {
    private struct State {
        var until: [RateLimitKey: (until: Int64, limit: Int64)] = [:]
        var nextExpiry = Int64.max
    }

    private let state = Mutex(State())
    private let count = Atomic<Int>(0)
    let capacity: Int

    init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
    }

    /// True while no key is blocked (one atomic load).
    var isEmpty: Bool { count.load(ordering: .relaxed) == 0 }

    /// The seconds until `key` is unblocked, or nil when it is not blocked at `now` under `limit`
    /// (nil: unlimited).
    func retryAfter(_ key: RateLimitKey, limit: Int64?, now: Int64) -> Int64? {
        guard !isEmpty, let limit else { return nil }
        return state.withLock { state -> Int64? in
            purge(&state, now: now)
            guard let block = state.until[key], block.until > now, limit <= block.limit else { return nil }
            return block.until - now
        }
    }

    /// Blocks `key` until `until`: it reached `limit`.
    func block(_ key: RateLimitKey, until: Int64, limit: Int64, now: Int64) {
        guard until > now else { return }
        state.withLock { state in
            purge(&state, now: now)
            if state.until[key] == nil, state.until.count >= capacity,
                let soonest = state.until.min(by: { $0.value.until < $1.value.until })?.key
            {
                state.until[soonest] = nil
            }
            state.until[key] = (max(state.until[key]?.until ?? 0, until), limit)
            state.nextExpiry = min(state.nextExpiry, until)
            count.store(state.until.count, ordering: .relaxed)
        }
    }

    private func purge(_ state: inout State, now: Int64) {
        guard now >= state.nextExpiry else { return }
        state.until = state.until.filter { $0.value.until > now }
        state.nextExpiry = state.until.values.map(\.until).min() ?? .max
        count.store(state.until.count, ordering: .relaxed)
    }
}
