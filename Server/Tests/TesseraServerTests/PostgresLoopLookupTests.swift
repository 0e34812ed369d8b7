import Foundation
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization
import TesseraTokens
import Testing

@testable import TesseraServer

/// Session lookups batched per HTTP event loop (`session_lookups=loop`): read on a connection of the
/// reader's own loop, with the same guarantees as the shared batcher.
@Suite("PostgreSQL session lookups per event loop", .enabled(if: PostgresTestDatabase.isConfigured))
struct PostgresLoopLookupTests {
    /// Two nodes on one fresh schema: `one` reads its lookups per event loop with `operationTimeout`.
    private func twoNodes(operationTimeout: Duration = .seconds(60)) async throws -> (
        PostgresStore, PostgresStore, ProvisionedProject
    ) {
        var configuration = try PostgresTestDatabase.configuration(maximumConnections: 8)
        let two = PostgresStore(configuration: configuration, masterKeys: TestMasterKeys.keyring)
        configuration.sessionLookups = .perEventLoop
        configuration.operationTimeout = operationTimeout
        let one = PostgresStore(configuration: configuration, masterKeys: TestMasterKeys.keyring)
        try await two.migrate()
        try await one.migrate()
        let project = try await ProjectProvisioner.create(
            name: "Loops", slug: "loops-\(UUID().uuidString.prefix(8).lowercased())", store: two,
            now: Date(timeIntervalSince1970: 1_795_000_000))
        return (one, two, project)
    }

    private func session(in store: PostgresStore, project: ProvisionedProject, tokenHash: [UInt8]) async throws
        -> String
    {
        let now: Int64 = 1_795_000_000
        let result = try await store.identify(
            IdentifyCommand(
                projectID: project.project.id, callerSessionID: nil, externalID: UUID().uuidString, verified: true,
                name: nil, avatarURL: nil, email: nil, tokenID: nil,
                newProfileID: OpaqueToken.identifier(prefix: "usr_"),
                newSession: SessionRecord(
                    id: OpaqueToken.identifier(prefix: "ses_"), projectID: project.project.id, profileID: "",
                    installationID: nil, kind: .verified, createdAt: now, lastAuthenticatedAt: now,
                    expiresAt: now + 3600),
                sessionTokenHash: tokenHash, now: now))
        return result.context.session.id
    }

    /// Runs `body` on `loop`, as a request handler of `tessera serve` runs on its HTTP loop, and says
    /// whether it ended there.
    private func onLoop<T: Sendable>(_ loop: any EventLoop, _ body: @escaping @Sendable () async throws -> T)
        async throws -> (T, Bool)
    {
        try await Task(executorPreference: EventLoopTaskExecutor(loop)) {
            let value = try await body()
            return (value, loop.inEventLoop)
        }.value
    }

    /// Looks the session up on `loop` until `connection` is open and idle, for up to 30 s (it is
    /// opened by lookups, in the background); every lookup must answer.
    private func lookUpUntilIdle(
        _ connection: PostgresDedicatedConnection, on loop: any EventLoop, in store: PostgresStore,
        tokenHash: [UInt8], sessionID: String
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !connection.isIdle {
            guard ContinuousClock.now < deadline else {
                Issue.record("the event loop's connection did not open within 30 s")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
            let (context, _) = try await onLoop(loop) { try await store.sessionContext(tokenHash: tokenHash) }
            #expect(context?.session.id == sessionID)
        }
    }

    @Test(
        "A lookup on an HTTP event loop is read on that loop's connection and answered there, sees other nodes' revokes at once, and survives the connection's loss"
    )
    func readOnTheLoop() async throws {
        let (one, two, project) = try await twoNodes()
        let tokenHash = OpaqueToken.sha256(OpaqueToken.sessionToken())
        let sessionID = try await session(in: two, project: project, tokenHash: tokenHash)
        let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
        #expect(one.tokenHashConnections.count == loops.count)
        #expect(two.tokenHashConnections.isEmpty)
        let loop = try #require(loops.last)
        let connection = try #require(one.tokenHashConnections.first { $0.loop === loop }?.connection)
        let logger = one.logger

        try await lookUpUntilIdle(connection, on: loop, in: one, tokenHash: tokenHash, sessionID: sessionID)
        // The reads went through the loop's batcher, not the shared one (whose connection never opened).
        #expect(!one.dedicatedConnections[0].isIdle)
        let (context, onItsLoop) = try await onLoop(loop) { try await one.sessionContext(tokenHash: tokenHash) }
        #expect(context?.session.revokedAt == nil)
        #expect(onItsLoop)
        // A read off the loops goes through the shared batcher and finds the same session.
        #expect(try await one.sessionContext(tokenHash: tokenHash)?.session.id == sessionID)
        #expect(try await one.sessionContext(sessionID: sessionID)?.session.id == sessionID)

        // A revoke through the other node is seen by the next lookup on the loop.
        #expect(try await two.revokeSession(sessionID: sessionID, profileID: nil, now: 1_795_000_100))
        let (revoked, _) = try await onLoop(loop) { try await one.sessionContext(tokenHash: tokenHash) }
        #expect(revoked?.session.revokedAt == 1_795_000_100)

        // The loop's connection is killed: lookups on the loop still answer (the pool, then a new one).
        let backend = try await onLoop(loop) {
            try await connection.run(
                { try await $0.rows("SELECT pg_backend_pid()", logger: logger).first?.int(0) }, otherwise: { nil })
        }.0
        let pid = try #require(backend)
        let terminated = try await two.statement { client in
            try await client.first("SELECT pg_terminate_backend(\(Int32(pid)))", logger: logger)?.bool(0)
        }
        #expect(terminated == true)
        for _ in 0..<3 {
            let (context, onItsLoop) = try await onLoop(loop) { try await one.sessionContext(tokenHash: tokenHash) }
            #expect(context?.session.id == sessionID)
            #expect(onItsLoop)
        }
        try await lookUpUntilIdle(connection, on: loop, in: one, tokenHash: tokenHash, sessionID: sessionID)
        let replacement = try await onLoop(loop) {
            try await connection.run(
                { try await $0.rows("SELECT pg_backend_pid()", logger: logger).first?.int(0) }, otherwise: { nil })
        }.0
        #expect(replacement != nil && replacement != pid)

        try await one.close()
        try await two.close()
        #expect(!connection.isIdle)
    }

    @Test(
        "A lookup on an event loop that outlives the operation timeout is refused as unavailable; the lookups after it answer"
    )
    func timesOutOnTheLoop() async throws {
        let (one, two, project) = try await twoNodes(operationTimeout: .seconds(1))
        let tokenHash = OpaqueToken.sha256(OpaqueToken.sessionToken())
        let sessionID = try await session(in: two, project: project, tokenHash: tokenHash)
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let connection = try #require(one.tokenHashConnections.first { $0.loop === loop }?.connection)
        try await lookUpUntilIdle(connection, on: loop, in: one, tokenHash: tokenHash, sessionID: sessionID)

        // Another node holds the sessions table locked: the lookup on the loop's connection waits.
        let logger = two.logger
        let refused = try await two.transaction { locked in
            try await locked.query("LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE", logger: logger)
            let started = ContinuousClock.now
            do {
                let (context, _) = try await self.onLoop(loop) { try await one.sessionContext(tokenHash: tokenHash) }
                return (CoreError?.none, context?.session.id, ContinuousClock.now - started)
            } catch {
                return (error as? CoreError, nil, ContinuousClock.now - started)
            }
        }
        #expect(refused.1 == nil, "the lookup answered while the table was locked")
        #expect(refused.0 == CoreError.unavailable)
        #expect(refused.2 >= .seconds(1) && refused.2 < .seconds(30))

        // The lock is gone: lookups answer again, and the loop's connection is back in use.
        for _ in 0..<3 {
            let (context, _) = try await onLoop(loop) { try await one.sessionContext(tokenHash: tokenHash) }
            #expect(context?.session.id == sessionID)
        }
        try await lookUpUntilIdle(connection, on: loop, in: one, tokenHash: tokenHash, sessionID: sessionID)
        try await one.close()
        try await two.close()
    }
}
