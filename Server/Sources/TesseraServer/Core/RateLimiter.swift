import Foundation

/// The server's rate limits: counters in the shared store, so limits hold across nodes, and the
/// blocks they lead to remembered in this process, so a blocked client costs no database work.
///
/// Three kinds of attempt are counted, in fixed one-minute windows:
/// - anonymous starts, per client address and project, each in the start's own write;
/// - failed identifies, per client address and per installation, when they fail;
/// - session lookups that find no session (`st_…` guessing), per client address for the whole
///   server, since a session token names no project; counted when they fail.
///
/// A successful heartbeat never touches a counter. While a client is blocked, every request it
/// makes of that kind is answered `rate_limited` before the attempt is tried, whether or not
/// the credential would be valid: otherwise the answer to a lucky guess would still tell it apart.
final class RateLimiter: Sendable {
    let store: any TesseraStore
    let blocks: RateLimitBlocks
    let failedSessionLookupsPerMinute: Int64?
    private let clock: @Sendable () -> Int64

    init(store: any TesseraStore, configuration: ServerConfiguration, blocks: RateLimitBlocks = RateLimitBlocks()) {
        self.store = store
        self.blocks = blocks
        self.failedSessionLookupsPerMinute = configuration.failedSessionLookupsPerMinute
        let now = configuration.now
        self.clock = { Int64(now().timeIntervalSince1970.rounded(.down)) }
    }

    /// The current time in Unix seconds.
    var now: Int64 { clock() }

    /// Throws `rate_limited` when any of the counters is blocked at `now` under its limit.
    func checkBlocked(_ limits: [(key: RateLimitKey, limit: Int64?)], now: Int64) throws {
        guard !blocks.isEmpty else { return }
        let waits = limits.compactMap { blocks.retryAfter($0.key, limit: $0.limit, now: now) }
        if let wait = waits.max() { throw CoreError.rateLimited(retryAfter: wait) }
    }

    /// Counts a failed attempt on every counter that has a limit and answers what to reply:
    /// `failure` itself, or `rate_limited` when a count passed its limit. A counter that
    /// reached its limit is blocked until its window ends.
    func failed(_ failure: CoreError, counting limits: [(key: RateLimitKey, limit: Int64?)], now: Int64) async
        -> CoreError
    {
        let limited = limits.compactMap { entry in entry.limit.map { (key: entry.key, limit: $0) } }
        guard !limited.isEmpty else { return failure }
        let window = RateLimitWindow(containing: now)
        // When the database cannot count, the attempt's own answer still stands.
        guard let hits = try? await store.hitRateLimits(limited.map(\.key), window: window) else { return failure }
        var exceeded = false
        for (entry, count) in zip(limited, hits) where count >= entry.limit {
            blocks.block(entry.key, until: window.end, limit: entry.limit, now: now)
            if count > entry.limit { exceeded = true }
        }
        return exceeded ? CoreError.rateLimited(retryAfter: window.retryAfter(now: now)) : failure
    }

    /// Remembers the answer of a counted anonymous start: a count at the limit blocks the address.
    func counted(_ charge: RateLimitCharge, hits: Int64?, now: Int64) {
        if let hits, hits >= charge.limit {
            blocks.block(charge.key, until: charge.window.end, limit: charge.limit, now: now)
        }
    }

    // MARK: Session lookups

    /// The counter of the session lookups from `clientAddress`; nil when they are not limited.
    private func sessionLookupKey(_ clientAddress: String) -> RateLimitKey? {
        guard failedSessionLookupsPerMinute != nil else { return nil }
        return RateLimitKey(projectID: "", bucket: .failedSessionLookup, key: clientAddress)
    }

    /// Refuses a session credential from a client blocked for failed lookups.
    func admitSessionLookup(from clientAddress: String) throws {
        guard !blocks.isEmpty, let key = sessionLookupKey(clientAddress) else { return }
        try checkBlocked([(key, failedSessionLookupsPerMinute)], now: now)
    }

    /// Counts a session credential from `clientAddress` that found no session (`failure`); the
    /// `rate_limited` error to answer instead when the count passed its limit, else nil.
    func failedSessionLookup(_ failure: CoreError, from clientAddress: String) async -> CoreError? {
        guard failure.code == .sessionNotFound, let key = sessionLookupKey(clientAddress) else { return nil }
        let answer = await failed(failure, counting: [(key, failedSessionLookupsPerMinute)], now: now)
        return answer.code == .rateLimited ? answer : nil
    }
}
