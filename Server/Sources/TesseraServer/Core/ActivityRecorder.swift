import Synchronization

/// Keeps who was active each day and the day's tallies, with at most one write per active profile
/// and installation per day from this node.
///
/// A heartbeat, start or identify calls ``saw(_:now:)``: a lock, a hash and a set lookup, no await
/// and, once the profile was seen today, nothing else. The first sight of the day queues a mark, and
/// ``flush()`` (every few seconds, from ``ActivityFlushService``) writes the queued marks and tallies
/// in one transaction, each mark `INSERT … ON CONFLICT DO NOTHING`, so another node's write of the
/// same mark, or this node's after its memory was cleared, changes nothing.
///
/// The memory of what was written is bounded: past ``capacity`` entries it starts afresh (the
/// writes it then repeats are idempotent). A mark queued when the store fails is written again at
/// the next flush; past ``capacity`` queued marks, new ones are dropped until a flush succeeds.
final class ActivityRecorder: Sendable {
    private struct State {
        var day: Int64 = .min
        /// Hashes of (project, profile, installation, kind) already queued or written today.
        var seen: Set<Int> = []
        var marks: [ActivityMark] = []
        var tallies: [TallyKey: Int64] = [:]
    }

    private struct TallyKey: Hashable {
        var projectID: String
        var day: Int64
        var name: String
    }

    private let state = Mutex(State())
    let store: any TesseraStore
    let capacity: Int
    /// Summaries by project, recounted in the background (the console's overview and `/metrics`).
    let summaries: BackgroundCountsCache<ActivitySummary>

    /// How many days the overview charts.
    static let chartDays: Int64 = 90
    /// How many days of activity are kept.
    static let retentionDays: Int64 = 366

    /// How old the summary the console and `/metrics` show may be.
    static let summarySeconds: Int64 = 300

    init(store: any TesseraStore, capacity: Int = 1_000_000, summarySeconds: Int64 = ActivityRecorder.summarySeconds) {
        self.store = store
        self.capacity = capacity
        self.summaries = BackgroundCountsCache(seconds: summarySeconds)
    }

    /// Notes that a session's profile was active at `now`.
    func saw(_ context: SessionContext, now: Int64) {
        let day = ActivitySQL.day(of: now)
        let session = context.session
        let identified = context.profile.kind == .identified
        var hasher = Hasher()
        hasher.combine(session.projectID)
        hasher.combine(context.profile.id)
        hasher.combine(session.installationID ?? "")
        hasher.combine(identified)
        let key = hasher.finalize()
        state.withLock { state in
            if state.day != day {
                state.day = day
                state.seen.removeAll(keepingCapacity: true)
            }
            guard !state.seen.contains(key), state.marks.count < capacity else { return }
            if state.seen.count >= capacity { state.seen.removeAll(keepingCapacity: true) }
            state.seen.insert(key)
            state.marks.append(
                ActivityMark(
                    projectID: session.projectID, day: day, profileID: context.profile.id,
                    installationID: session.installationID ?? "", identified: identified))
        }
    }

    /// The marks waiting for the next flush.
    var queued: Int { state.withLock { $0.marks.count } }

    /// Adds one to a tally of the project's day (`identify.created`, `app_attest.checks`…).
    func tally(_ name: String, projectID: String, now: Int64) {
        let key = TallyKey(projectID: projectID, day: ActivitySQL.day(of: now), name: name)
        state.withLock { $0.tallies[key, default: 0] += 1 }
    }

    /// Writes what was queued since the last flush; on a failure the queue is kept for the next.
    /// Flushes at once each take what is queued when they start: nothing is written twice.
    func flush() async throws {
        let (marks, tallies) = state.withLock { state in
            defer {
                state.marks = []
                state.tallies = [:]
            }
            return (state.marks, state.tallies)
        }
        guard !marks.isEmpty || !tallies.isEmpty else { return }
        do {
            try await store.recordActivity(
                marks,
                tallies: tallies.map {
                    ActivityTally(projectID: $0.key.projectID, day: $0.key.day, name: $0.key.name, count: $0.value)
                })
        } catch {
            state.withLock { state in
                state.marks = Array((marks + state.marks).prefix(capacity))
                for (key, count) in tallies { state.tallies[key, default: 0] += count }
            }
            throw error
        }
    }

    /// The project's summary for the days ending with `now`'s, as last counted (nil before the first
    /// count ends); a count (after a flush of this node's queue) starts in the background when there
    /// is none or it is old.
    func summary(projectID: String, now: Int64) -> (value: ActivitySummary, at: Int64)? {
        let today = ActivitySQL.day(of: now)
        let store = store
        return summaries.get(projectID: projectID, now: now) { [self] in
            // This node's queue first, so the count includes what it saw until now.
            try? await flush()
            return try await store.activitySummary(
                projectID: projectID, firstDay: today - Self.chartDays + 1, today: today)
        }
    }
}
