import Foundation
import Synchronization
import TesseraTokens
import Testing

@testable import TesseraServer

/// The feed's promise on PostgreSQL: a reader that polls with `after` = the last sequence it saw
/// never skips an event whose transaction committed late, whatever the writers' interleaving.
/// Whether the writers still run.
private final class Flag: Sendable {
    let value = Atomic<Bool>(true)
}

@Suite("PostgreSQL events: no reader skips a late commit", .enabled(if: PostgresTestDatabase.isConfigured))
struct PostgresEventOrderTests {
    @Test("Concurrent writers on two nodes; a polling reader sees 1…N exactly once each")
    func pollingReaderSeesEverything() async throws {
        let (one, two, project) = try await PostgresTestDatabase.twoNodes(project: "Feed")
        let projectID = project.project.id
        let starts = 160
        let now: Int64 = 1_795_000_000
        let writing = Flag()

        let seen = try await withThrowingTaskGroup(of: [Int64].self) { group in
            group.addTask {
                try await withThrowingTaskGroup(of: Void.self) { writers in
                    for index in 0..<starts {
                        writers.addTask {
                            let store = index.isMultiple(of: 2) ? one : two
                            _ = try await store.startAnonymousSession(
                                AnonymousStart(
                                    projectID: projectID, installationID: UUID().uuidString.lowercased(),
                                    installationSecretHash: OpaqueToken.sha256("s"),
                                    newProfileID: OpaqueToken.identifier(prefix: "usr_"),
                                    newSession: SessionRecord(
                                        id: OpaqueToken.identifier(prefix: "ses_"), projectID: projectID,
                                        profileID: "", installationID: nil, kind: .anonymous, createdAt: now,
                                        lastAuthenticatedAt: now, expiresAt: now + 3600),
                                    sessionTokenHash: OpaqueToken.sha256(OpaqueToken.sessionToken())))
                        }
                    }
                    try await writers.waitForAll()
                }
                writing.value.store(false, ordering: .sequentiallyConsistent)
                return []
            }
            group.addTask {
                // The reader: polls with after = next_after while the writers run, then once more
                // after they finished, until a read finds nothing new.
                var sequences: [Int64] = []
                var after: Int64 = 0
                while true {
                    let done = !writing.value.load(ordering: .sequentiallyConsistent)
                    let page = try await one.events(EventQuery(projectID: projectID, after: after, limit: 7))
                    sequences += page.map(\.sequence)
                    after = page.last?.sequence ?? after
                    if done && page.isEmpty { return sequences }
                    if page.isEmpty { await Task.yield() }
                }
            }
            var all: [Int64] = []
            for try await part in group { all += part }
            return all
        }
        let total = Int64(starts * 2)
        #expect(seen.count == Int(total), "every event read exactly once")
        #expect(seen == Array(1...total), "in order, without a gap or a repeat")
        try await one.close()
        try await two.close()
    }

    @Test("A transaction that took a sequence holds back later ones until it commits: nothing visible skips it")
    func lateCommitIsNotSkipped() async throws {
        let configuration = try PostgresTestDatabase.configuration(maximumConnections: 4)
        let (store, project) = try await PostgresTestDatabase.node(configuration, project: "Late")
        let projectID = project.project.id
        let now: Int64 = 1_795_000_000
        let (appended, appendedSignal) = AsyncStream.makeStream(of: Int32.self)
        let (release, releaseSignal) = AsyncStream.makeStream(of: Void.self)
        let logger = store.logger

        // T1 writes its event, then stays open (uncommitted) until released.
        let first = Task {
            try await store.client.withTransaction(logger: logger) { connection in
                var batch = EventBatch(projectID: projectID, origin: .system, now: now)
                batch.append(.identitySecretCreated(kid: "late"))
                try await PostgresStore.append(batch, in: connection, logger: logger)
                let pid = try await connection.first("SELECT pg_backend_pid()", logger: logger)?.int(0) ?? 0
                appendedSignal.yield(Int32(pid))
                for await _ in release { break }
            }
        }
        var iterator = appended.makeAsyncIterator()
        let firstPID = try #require(await iterator.next())
        // T2: a whole anonymous start, with its two events, while T1 is open.
        let secondDone = Flag()
        let second = Task {
            defer { secondDone.value.store(false, ordering: .sequentiallyConsistent) }
            return try await store.startAnonymousSession(
                AnonymousStart(
                    projectID: projectID, installationID: UUID().uuidString.lowercased(),
                    installationSecretHash: OpaqueToken.sha256("s"),
                    newProfileID: OpaqueToken.identifier(prefix: "usr_"),
                    newSession: SessionRecord(
                        id: OpaqueToken.identifier(prefix: "ses_"), projectID: projectID, profileID: "",
                        installationID: nil, kind: .anonymous, createdAt: now, lastAuthenticatedAt: now,
                        expiresAt: now + 3600),
                    sessionTokenHash: OpaqueToken.sha256(OpaqueToken.sessionToken())))
        }
        // Until T2 either finished or waits for T1's lock (whichever this design does).
        while secondDone.value.load(ordering: .sequentiallyConsistent) {
            let waiting =
                try await store.client.first(
                    "SELECT COUNT(*) FROM pg_stat_activity WHERE \(firstPID) = ANY(pg_blocking_pids(pid))",
                    logger: logger)?.int(0) ?? 0
            if waiting > 0 { break }
            await Task.yield()
        }
        // A reader now: whatever it sees must not be followed later by a smaller sequence.
        let early = try await store.events(EventQuery(projectID: projectID, after: 0, limit: 50))
        releaseSignal.yield()
        try await first.value
        _ = try await second.value
        let after = early.last?.sequence ?? 0
        let late = try await store.events(EventQuery(projectID: projectID, after: after, limit: 50))
        #expect((early + late).map(\.sequence) == [1, 2, 3], "the reader following next_after saw every event once")
        try await store.close()
    }

    @Test("Events a node committed and never sequenced (it died) are sequenced by another node, without a read")
    func orphanedOutboxIsSequenced() async throws {
        let configuration = try PostgresTestDatabase.configuration(maximumConnections: 4)
        let (dead, project) = try await PostgresTestDatabase.node(configuration, project: "Orphan")
        let projectID = project.project.id
        let logger = dead.logger
        // Committed through the pool directly: the dying node's sequencer is never woken.
        try await dead.client.withTransaction(logger: logger) { connection in
            var batch = EventBatch(projectID: projectID, origin: .system, now: 1_795_000_000)
            batch.append(.identitySecretCreated(kid: "orphan"))
            try await PostgresStore.append(batch, in: connection, logger: logger)
        }
        try await dead.close()

        let survivor = try await PostgresTestDatabase.node(configuration)
        let deadline = ContinuousClock.now + .seconds(30)
        var pending = 1
        while pending > 0 && ContinuousClock.now < deadline {
            pending = try await survivor.statement { client in
                Int(try await client.first("SELECT count(*) FROM event_outbox", logger: logger)?.int(0) ?? 0)
            }
            if pending > 0 { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(pending == 0, "the survivor's sequencer moved the orphaned event on its own")
        let feed = try await survivor.statement { client in
            try await client.rows("SELECT sequence, type FROM events", logger: logger).map {
                (try $0.int(0), try $0.text(1))
            }
        }
        #expect(feed.map(\.0) == [1] && feed.map(\.1) == ["identity_secret.created"])
        try await survivor.close()
    }
}
