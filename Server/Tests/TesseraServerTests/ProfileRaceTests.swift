import Foundation
import Synchronization
import TesseraTokens
import Testing

@testable import TesseraServer

/// Two changes to one profile sent at once end as one of their serial orders would: the answers,
/// the profile and the events agree with "the first, then the second".
///
/// Each test queues its two operations behind a ``WriteGate`` in a known order and then opens it.
/// On PostgreSQL the gate is a transaction holding the profile's row lock: the operations are seen
/// waiting in `pg_blocking_pids`, and PostgreSQL grants the lock in the order they queued. On SQLite
/// it is a write job that holds the writer: the operations queue behind it and run in order. So the
/// second operation always meets the first one's commit, the interleaving in which a store that acts
/// on what it read before its lock goes wrong (a "not found" that wrote an event, an erasure that
/// erased nothing, a `profile.erased` without the external ID the promote gave the profile).
@Suite("Concurrent changes to one profile end as a serial order would")
struct ProfileRaceTests {
    private static let now: Int64 = 1_795_000_000

    @Test(
        "erase ∥ block: one profile.erased, no profile.blocked, the block is not found",
        arguments: StoreBackend.allCases)
    func eraseThenBlock(backend: StoreBackend) async throws {
        try await Race.with(backend) { race in
            let profileID = try await race.start().context.profile.id
            let (erased, blocked) = try await race.run(
                holding: profileID,
                race.erasure(of: profileID, now: Self.now),
                then: {
                    try await $0.setProfileBlocked(
                        projectID: race.projectID, profileID: profileID, blocked: true, reason: "r", now: Self.now,
                        origin: .system)
                })
            #expect(erased)
            #expect(blocked == nil, "the block found no profile")
            let events = try await race.eventsSince()
            #expect(events.filter { $0.type == "profile.erased" }.count == 1)
            #expect(!events.contains { $0.type == "profile.blocked" }, "a block answered 'not found' wrote nothing")
        }
    }

    @Test(
        "merge ∥ block: the block lands on the profile merged into, one profile.blocked naming it",
        arguments: StoreBackend.allCases)
    func mergeThenBlock(backend: StoreBackend) async throws {
        try await Race.with(backend) { race in
            let user = try await race.identify(externalID: "user-1")
            let target = user.context.profile.id
            let anonymous = try await race.start()
            let aliasID = anonymous.context.profile.id
            let (merged, blocked) = try await race.run(
                holding: aliasID,
                { try await race.identify(externalID: "user-1", caller: anonymous.context.session.id, store: $0) },
                then: {
                    try await $0.setProfileBlocked(
                        projectID: race.projectID, profileID: aliasID, blocked: true, reason: "r", now: Self.now,
                        origin: .system)
                })
            #expect(merged.merge?.outcome == .merged)
            let profile = try #require(blocked, "the alias names the profile it was merged into")
            #expect(profile.id == target && profile.blocked)
            let events = try await race.eventsSince()
            let blocks = events.filter { $0.type == "profile.blocked" }
            #expect(blocks.count == 1)
            #expect(blocks.first?.profileID == target)
            #expect(try await race.store.liveSessions(profileID: target, now: Self.now).isEmpty, "the block ended them")
        }
    }

    @Test("erase ∥ erase: one erasure, one not found, one profile.erased", arguments: StoreBackend.allCases)
    func eraseTwice(backend: StoreBackend) async throws {
        try await Race.with(backend) { race in
            let user = try await race.identify(externalID: "user-2", email: "two@example.com")
            let profileID = user.context.profile.id
            let erase = race.erasure(of: profileID, now: Self.now)
            let (first, second) = try await race.run(holding: profileID, erase, then: erase)
            #expect(first && !second, "the second erasure found nothing")
            let erasures = try await race.eventsSince().filter { $0.type == "profile.erased" }
            #expect(erasures.count == 1)
            #expect(
                erasures.first?.data.contains("\"external_id\":\"user-2\"") == true, "the one event keeps its subject")
        }
    }

    @Test("erase ∥ merge: nothing personal survives under either ID", arguments: StoreBackend.allCases)
    func mergeThenErase(backend: StoreBackend) async throws {
        try await Race.with(backend) { race in
            let user = try await race.identify(externalID: "user-3", name: "Ada", email: "ada@example.com")
            let target = user.context.profile.id
            let anonymous = try await race.start()
            let aliasID = anonymous.context.profile.id
            let (merged, erased) = try await race.run(
                holding: aliasID,
                {
                    try await race.identify(
                        externalID: "user-3", caller: anonymous.context.session.id, name: "Ada",
                        email: "ada@example.com",
                        store: $0)
                },
                then: race.erasure(of: aliasID, now: Self.now))
            #expect(merged.merge?.outcome == .merged)
            #expect(erased)
            #expect(try await race.store.profile(projectID: race.projectID, id: aliasID) == nil)
            #expect(try await race.store.profile(projectID: race.projectID, id: target) == nil)
            #expect(try await race.store.profiles(projectID: race.projectID, externalID: "user-3").isEmpty)
            let events = try await race.eventsSince()
            let erasure = try #require(events.first { $0.type == "profile.erased" })
            #expect(erasure.profileID == target, "the erasure followed the alias to the profile it names")
            for event in events where event.type != "profile.erased" {
                #expect(!event.data.contains("ada@example.com") && !event.data.contains("user-3"), "\(event.type)")
            }
        }
    }

    @Test("erase ∥ promote: profile.erased carries the external ID the promote gave", arguments: StoreBackend.allCases)
    func promoteThenErase(backend: StoreBackend) async throws {
        try await Race.with(backend) { race in
            let anonymous = try await race.start()
            let profileID = anonymous.context.profile.id
            let (promoted, erased) = try await race.run(
                holding: profileID,
                { try await race.identify(externalID: "user-4", caller: anonymous.context.session.id, store: $0) },
                then: race.erasure(of: profileID, now: Self.now))
            #expect(promoted.merge?.outcome == .promoted)
            #expect(erased)
            let erasure = try #require(try await race.eventsSince().first { $0.type == "profile.erased" })
            #expect(erasure.data.contains("\"external_id\":\"user-4\""), "\(erasure.data)")
            #expect(try await race.store.profiles(projectID: race.projectID, externalID: "user-4").isEmpty)
        }
    }

    @Test(
        "erase ∥ revoke all sessions: the revoke finds no profile and claims no session",
        arguments: StoreBackend.allCases)
    func eraseThenRevokeAll(backend: StoreBackend) async throws {
        try await Race.with(backend) { race in
            let profileID = try await race.identify(externalID: "user-5").context.profile.id
            let (erased, revoked) = try await race.run(
                holding: profileID,
                race.erasure(of: profileID, now: Self.now),
                then: {
                    try await $0.revokeSessions(
                        projectID: race.projectID, profileID: profileID, now: Self.now, origin: .system)
                })
            #expect(erased)
            #expect(revoked == nil, "not found: the erasure had ended the sessions")
            let ended = try await race.eventsSince().filter { $0.type == "session.ended" }
            #expect(ended.count == 1 && ended.allSatisfy { $0.data.contains("\"reason\":\"erased\"") })
        }
    }
}

/// One store with one project, and the operations a race test needs.
final class Race: Sendable {
    let backend: StoreBackend
    let store: any TesseraStore
    let projectID: String
    /// The last event sequence before the race.
    let mark = Mutex<Int64>(0)

    init(backend: StoreBackend, store: any TesseraStore, projectID: String) {
        self.backend = backend
        self.store = store
        self.projectID = projectID
    }

    static func make(_ backend: StoreBackend) async throws -> Race {
        let store: any TesseraStore
        switch backend {
        case .sqlite: store = try backend.makeStore()
        case .postgres:
            // The gate, two operations and the observer each need a connection.
            store = PostgresStore(
                configuration: try PostgresTestDatabase.configuration(maximumConnections: 4),
                masterKeys: TestMasterKeys.keyring)
        }
        try await store.migrate()
        let project = try await ProjectProvisioner.create(
            name: "Race", slug: "race-\(UUID().uuidString.prefix(8).lowercased())", store: store,
            now: Date(timeIntervalSince1970: 1_795_000_000))
        return Race(backend: backend, store: store, projectID: project.project.id)
    }

    func start() async throws -> AnonymousStartResult {
        try await store.startAnonymousSession(
            AnonymousStart(
                projectID: projectID, installationID: UUID().uuidString.lowercased(),
                installationSecretHash: OpaqueToken.sha256("s"), newProfileID: OpaqueToken.identifier(prefix: "usr_"),
                newSession: session(.anonymous), sessionTokenHash: OpaqueToken.sha256(OpaqueToken.sessionToken())))
    }

    func identify(
        externalID: String, caller: String? = nil, name: String? = nil, email: String? = nil,
        store: (any TesseraStore)? = nil
    ) async throws -> IdentifyResult {
        try await (store ?? self.store).identify(
            IdentifyCommand(
                projectID: projectID, callerSessionID: caller, externalID: externalID, verified: true, name: name,
                avatarURL: nil, email: email, tokenID: nil, newProfileID: OpaqueToken.identifier(prefix: "usr_"),
                newSession: session(.verified), sessionTokenHash: OpaqueToken.sha256(OpaqueToken.sessionToken()),
                now: 1_795_000_000))
    }

    private func session(_ kind: SessionRecord.Kind) -> SessionRecord {
        SessionRecord(
            id: OpaqueToken.identifier(prefix: "ses_"), projectID: projectID, profileID: "", installationID: nil,
            kind: kind, createdAt: 1_795_000_000, lastAuthenticatedAt: 1_795_000_000, expiresAt: 1_795_003_600)
    }

    /// The events committed since the race began.
    func eventsSince() async throws -> [EventRecord] {
        try await store.events(EventQuery(projectID: projectID, after: mark.withLock { $0 }, limit: 200))
    }

    /// Holds `profileID`'s writes back, queues `first` and then `second` behind the gate, opens it and
    /// answers both results.
    func run<A: Sendable, B: Sendable>(
        holding profileID: String, _ first: @escaping @Sendable (any TesseraStore) async throws -> A,
        then second: @escaping @Sendable (any TesseraStore) async throws -> B
    ) async throws -> (A, B) {
        try await run(holding: [.profile(profileID)], first, then: second)
    }

    /// Holds `rows` (on PostgreSQL, in the lock order; on SQLite, the writer), queues `first` and then
    /// `second` behind them, opens the gate and answers both results.
    func run<A: Sendable, B: Sendable>(
        holding rows: [HeldRow], _ first: @escaping @Sendable (any TesseraStore) async throws -> A,
        then second: @escaping @Sendable (any TesseraStore) async throws -> B
    ) async throws -> (A, B) {
        let last = try await store.events(EventQuery(projectID: projectID, after: 0, limit: 1000)).last?.sequence
        mark.withLock { $0 = last ?? 0 }
        let gate = try await holdWrites(store, rows: rows)
        let store = store
        let one = Task { try await first(store) }
        try await gate.waitForQueued(1)
        let two = Task { try await second(store) }
        try await gate.waitForQueued(2)
        try await gate.open()
        return (try await one.value, try await two.value)
    }

    /// Closes the store (its pool and dedicated connections): many tests share one PostgreSQL.
    /// The erasure of `profileID` (of the race's project, at `now`), as an operation for ``run(holding:_:then:)``.
    func erasure(of profileID: String, now: Int64) -> @Sendable (any TesseraStore) async throws -> Bool {
        let projectID = projectID
        return { try await $0.eraseProfile(projectID: projectID, profileID: profileID, now: now, origin: .system) }
    }

    /// The end of `sessionID` by the caller `callerID` (a revoke, at `now`), as an operation for
    /// ``run(holding:_:then:)``: nil when the caller's session had ended.
    func revocation(of sessionID: String, by callerID: String, now: Int64)
        -> @Sendable (any TesseraStore) async throws -> Bool?
    {
        {
            try await $0.revokeSession(
                sessionID: sessionID, callerSessionID: callerID, now: now, reason: .revoked, origin: .system)
        }
    }

    func close() async throws { try await store.close() }

    /// Runs `body` with a new race on `backend`, then closes its store, whether `body` threw or not.
    static func with(_ backend: StoreBackend, _ body: (Race) async throws -> Void) async throws {
        let race = try await make(backend)
        do {
            try await body(race)
        } catch {
            try? await race.close()
            throw error
        }
        try await race.close()
    }
}

/// Holds `store`'s writes back: on PostgreSQL a transaction holding `rows` (in the order given), on
/// SQLite the one writer.
func holdWrites(_ store: any TesseraStore, rows: [HeldRow]) async throws -> any WriteGate {
    if let store = store as? PostgresStore { return try await PostgresGate.hold(rows, store: store) }
    return try await SQLiteGate.hold(try #require(store as? SQLiteStore))
}

/// Holds a backend's writes back until opened, and tells when operations queue behind it.
protocol WriteGate: Sendable {
    /// Returns once `count` operations wait behind the gate.
    func waitForQueued(_ count: Int) async throws
    func open() async throws
}

/// A row a ``PostgresGate`` locks.
struct HeldRow: Sendable {
    let table: String
    let column: String
    let id: String

    static func profile(_ id: String) -> HeldRow { HeldRow(table: "profiles", column: "id", id: id) }
    static func session(_ id: String) -> HeldRow { HeldRow(table: "sessions", column: "id", id: id) }
    static func project(_ id: String) -> HeldRow { HeldRow(table: "projects", column: "id", id: id) }
    static func webhook(_ id: String) -> HeldRow { HeldRow(table: "webhooks", column: "id", id: id) }
    static func `operator`(_ id: String) -> HeldRow { HeldRow(table: "operators", column: "id", id: id) }
    static func installation(_ id: String) -> HeldRow {
        HeldRow(table: "installations", column: "installation_id", id: id)
    }
}

/// A transaction that holds rows' locks (FOR UPDATE), in the order given, and changes nothing.
struct PostgresGate: WriteGate {
    let store: PostgresStore
    let holder: Int32
    let release: AsyncStream<Void>.Continuation
    let task: Task<Void, any Error>

    static func hold(_ rows: [HeldRow], store: PostgresStore) async throws -> PostgresGate {
        let (locked, lockedSignal) = AsyncStream.makeStream(of: Int32.self)
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let logger = store.logger
        let task = Task {
            try await store.client.withTransaction(logger: logger) { connection in
                for row in rows {
                    let locked = try await connection.rows(
                        "SELECT 1 FROM \(unescaped: row.table) WHERE \(unescaped: row.column) = \(row.id) FOR UPDATE",
                        logger: logger)
                    #expect(!locked.isEmpty, "the gate holds \(row.table) \(row.id)")
                }
                let pid = try await connection.first("SELECT pg_backend_pid()", logger: logger)?.int(0) ?? 0
                lockedSignal.yield(Int32(pid))
                for await _ in released { break }
            }
        }
        var iterator = locked.makeAsyncIterator()
        let holder = try #require(await iterator.next())
        return PostgresGate(store: store, holder: holder, release: release, task: task)
    }

    /// Counts the backends waiting, directly or through another waiter, for the gate's transaction.
    func waitForQueued(_ count: Int) async throws {
        let logger = store.logger
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let waiting =
                try await store.client.first(
                    """
                    WITH RECURSIVE waiting(pid) AS (
                        SELECT pid FROM pg_stat_activity WHERE \(holder) = ANY(pg_blocking_pids(pid))
                        UNION
                        SELECT a.pid FROM pg_stat_activity a JOIN waiting w ON w.pid = ANY(pg_blocking_pids(a.pid))
                    )
                    SELECT COUNT(*) FROM waiting
                    """, logger: logger)?.int(0) ?? 0
            if waiting >= count { return }
            await Task.yield()
        }
        Issue.record("\(count) operations never queued behind the held rows")
    }

    func open() async throws {
        release.yield()
        try await task.value
    }
}

/// A write job that holds SQLite's one writer; later writes queue behind it and run in order.
struct SQLiteGate: WriteGate {
    let store: SQLiteStore
    let release: DispatchSemaphore
    let task: Task<Void, any Error>

    static func hold(_ store: SQLiteStore) async throws -> SQLiteGate {
        let release = DispatchSemaphore(value: 0)
        let (holding, holdingSignal) = AsyncStream.makeStream(of: Void.self)
        let task = Task {
            try await store.writer.write { _ in
                holdingSignal.yield()
                release.wait()
            }
        }
        var iterator = holding.makeAsyncIterator()
        _ = await iterator.next()
        return SQLiteGate(store: store, release: release, task: task)
    }

    func waitForQueued(_ count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while store.writer.queuedJobs < count && ContinuousClock.now < deadline { await Task.yield() }
        #expect(store.writer.queuedJobs >= count, "the operations queued behind the writer")
    }

    func open() async throws {
        release.signal()
        try await task.value
    }
}

extension StoreBackend {
    /// A store for race tests: on PostgreSQL with connections for a gate, two requests and a reader.
    func makeRaceStore() throws -> any TesseraStore {
        switch self {
        case .sqlite: try makeStore()
        case .postgres: try PostgresTestDatabase.makeStore(maximumConnections: 6)
        }
    }
}

/// Sends `first` and then `second` while `rows` are held, each seen queued behind the gate before
/// the next is sent, opens the gate and answers both replies.
func race<A: Sendable, B: Sendable>(
    _ store: any TesseraStore, holding rows: [HeldRow], _ first: @escaping @Sendable () async throws -> A,
    then second: @escaping @Sendable () async throws -> B
) async throws -> (A, B) {
    let gate = try await holdWrites(store, rows: rows)
    let one = Task { try await first() }
    try await gate.waitForQueued(1)
    let two = Task { try await second() }
    try await gate.waitForQueued(2)
    try await gate.open()
    return (try await one.value, try await two.value)
}
