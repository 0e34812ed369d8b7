import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// What only the PostgreSQL store must show: several stores (nodes) on one database at once.
@Suite("PostgreSQL store", .enabled(if: PostgresTestDatabase.isConfigured))
struct PostgresStoreTests {
    /// Two stores on one fresh schema, migrated, with one project.
    private func twoNodes() async throws -> (PostgresStore, PostgresStore, ProvisionedProject) {
        try await PostgresTestDatabase.twoNodes(project: "Nodes")
    }

    private func identify(
        _ store: any TesseraStore, project: ProvisionedProject, sub: String, caller: String? = nil, jti: String? = nil,
        tokenHash: [UInt8] = OpaqueToken.sha256(OpaqueToken.sessionToken()), now: Int64 = 1_795_000_000
    ) async throws -> IdentifyResult {
        try await store.identify(
            IdentifyCommand(
                projectID: project.project.id, callerSessionID: caller, externalID: sub, verified: true, name: nil,
                avatarURL: nil, email: nil, tokenID: jti.map { ($0, now + 60) },
                newProfileID: OpaqueToken.identifier(prefix: "usr_"),
                newSession: SessionRecord(
                    id: OpaqueToken.identifier(prefix: "ses_"), projectID: project.project.id, profileID: "",
                    installationID: nil, kind: .verified, createdAt: now, lastAuthenticatedAt: now,
                    expiresAt: now + 3600),
                sessionTokenHash: tokenHash, now: now))
    }

    private func anonymous(_ store: any TesseraStore, project: ProvisionedProject, installationID: String)
        async throws -> AnonymousStartResult
    {
        let now: Int64 = 1_795_000_000
        return try await store.startAnonymousSession(
            AnonymousStart(
                projectID: project.project.id, installationID: installationID,
                installationSecretHash: OpaqueToken.sha256("secret"),
                newProfileID: OpaqueToken.identifier(prefix: "usr_"),
                newSession: SessionRecord(
                    id: OpaqueToken.identifier(prefix: "ses_"), projectID: project.project.id, profileID: "",
                    installationID: nil, kind: .anonymous, createdAt: now, lastAuthenticatedAt: now,
                    expiresAt: now + 3600),
                sessionTokenHash: OpaqueToken.sha256(OpaqueToken.sessionToken())))
    }

    @Test("Ten nodes migrating at once apply each version exactly once, and each registers")
    func concurrentMigrations() async throws {
        let configuration = try PostgresTestDatabase.configuration(maximumConnections: 2)
        let stores = (0..<10).map { _ in PostgresStore(configuration: configuration, masterKeys: TestMasterKeys.keyring)
        }
        let now: Int64 = 1_795_000_000
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, store) in stores.enumerated() {
                let node = NodeRecord(
                    id: "node-\(index)", release: TesseraRelease.version, schemaVersion: TesseraRelease.schemaVersion,
                    startedAt: now, heartbeatAt: now)
                group.addTask { _ = try await store.migrate(MigrationRequest(node: node, now: now)) }
            }
            try await group.waitForAll()
        }
        #expect(Set(try await stores[0].nodes().map(\.id)) == Set((0..<10).map { "node-\($0)" }))
        try await stores[0].migrate()
        let versions = try await stores[0].statement { client in
            try await client.rows("SELECT version FROM schema_migrations ORDER BY version", logger: stores[0].logger)
                .map { try $0.int(0) }
        }
        #expect(versions == PostgresMigrations.all.map(\.version))
        for store in stores { try await store.close() }
    }

    @Test("50 concurrent identifies of one sub across two nodes give one profile")
    func concurrentIdentifies() async throws {
        let (one, two, project) = try await twoNodes()
        let profiles = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<50 {
                let store = index % 2 == 0 ? one : two
                group.addTask { try await identify(store, project: project, sub: "same-user").context.profile.id }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(profiles.count == 1)
        #expect(try await one.profiles(projectID: project.project.id, externalID: "same-user").count == 1)
        try await one.close()
        try await two.close()
    }

    @Test("Concurrent anonymous identifies of one sub across nodes: one profile, the rest merged into it")
    func concurrentPromotions() async throws {
        let (one, two, project) = try await twoNodes()
        var callers: [String] = []
        for index in 0..<10 {
            let started = try await anonymous(
                index % 2 == 0 ? one : two, project: project, installationID: UUID().uuidString.lowercased())
            callers.append(started.context.session.id)
        }
        let outcomes = try await withThrowingTaskGroup(of: (String, MergeOutcome?).self) { group in
            for (index, caller) in callers.enumerated() {
                let store = index % 2 == 0 ? one : two
                group.addTask {
                    let result = try await identify(store, project: project, sub: "promoted", caller: caller)
                    return (result.context.profile.id, result.merge?.outcome)
                }
            }
            return try await group.reduce(into: [(String, MergeOutcome?)]()) { $0.append($1) }
        }
        #expect(Set(outcomes.map(\.0)).count == 1)
        #expect(outcomes.filter { $0.1 == .promoted }.count == 1)
        #expect(outcomes.filter { $0.1 == .merged }.count == 9)
        try await one.close()
        try await two.close()
    }

    @Test("One installation started concurrently on two nodes keeps one profile")
    func concurrentAnonymousStarts() async throws {
        let (one, two, project) = try await twoNodes()
        let installationID = UUID().uuidString.lowercased()
        let results = try await withThrowingTaskGroup(of: AnonymousStartResult.self) { group in
            for index in 0..<20 {
                let store = index % 2 == 0 ? one : two
                group.addTask { try await anonymous(store, project: project, installationID: installationID) }
            }
            return try await group.reduce(into: [AnonymousStartResult]()) { $0.append($1) }
        }
        #expect(Set(results.map(\.context.profile.id)).count == 1)
        #expect(results.filter(\.createdInstallation).count == 1)
        try await one.close()
        try await two.close()
    }

    @Test("A jti is accepted once across nodes, even at the same moment")
    func jtiOnce() async throws {
        let (one, two, project) = try await twoNodes()
        let accepted = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<20 {
                let store = index % 2 == 0 ? one : two
                group.addTask {
                    do {
                        _ = try await identify(store, project: project, sub: "u\(index)", jti: "shared-jti")
                        return true
                    } catch {
                        return false
                    }
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(accepted == 1)
        await #expect(throws: CoreError.self) {
            _ = try await identify(one, project: project, sub: "again", jti: "shared-jti")
        }
        try await one.close()
        try await two.close()
    }

    @Test("A session revoked through one node is dead on the other at once")
    func revokeAcrossNodes() async throws {
        let (one, two, project) = try await twoNodes()
        let session = try await identify(one, project: project, sub: "revoked").context.session
        let now: Int64 = 1_795_000_000
        #expect(try await two.extendSession(sessionID: session.id, expiresAt: now + 7200, now: now) != nil)
        #expect(try await one.revokeSession(sessionID: session.id, profileID: nil, now: now))
        #expect(try await two.sessionContext(sessionID: session.id)?.session.revokedAt == now)
        #expect(try await two.extendSession(sessionID: session.id, expiresAt: now + 9999, now: now) == nil)
        #expect(try await !two.revokeSession(sessionID: session.id, profileID: nil, now: now))
        try await one.close()
        try await two.close()
    }

    @Test("Batched lookups move to a dedicated connection, see other nodes' revokes at once, and survive its loss")
    func dedicatedConnection() async throws {
        let (one, two, project) = try await twoNodes()
        let now: Int64 = 1_795_000_000
        let tokenHash = OpaqueToken.sha256(OpaqueToken.sessionToken())
        let session = try await identify(one, project: project, sub: "dedicated", tokenHash: tokenHash, now: now)
            .context.session
        let logger = one.logger
        let dedicated = one.dedicatedConnections[0]

        // The first lookup goes through the pool and opens the dedicated connection in the background.
        #expect(try await one.sessionContext(tokenHash: tokenHash)?.session.id == session.id)
        try await lookUpUntilIdle(dedicated, in: one, tokenHash: tokenHash, sessionID: session.id)
        let backend = try await dedicated.run(
            { try await $0.rows("SELECT pg_backend_pid()", logger: logger).first?.int(0) },
            otherwise: { nil })
        let pid = try #require(backend)

        // On the dedicated connection: a revoke through the other node is seen at once.
        #expect(try await one.sessionContext(tokenHash: tokenHash)?.session.revokedAt == nil)
        #expect(try await two.revokeSession(sessionID: session.id, profileID: nil, now: now))
        #expect(try await one.sessionContext(tokenHash: tokenHash)?.session.revokedAt == now)

        // The connection is killed: lookups still answer (the pool, then a new dedicated connection).
        let terminated = try await two.statement { client in
            try await client.first("SELECT pg_terminate_backend(\(Int32(pid)))", logger: logger)?.bool(0)
        }
        #expect(terminated == true)
        for _ in 0..<3 { #expect(try await one.sessionContext(tokenHash: tokenHash)?.session.id == session.id) }
        try await lookUpUntilIdle(dedicated, in: one, tokenHash: tokenHash, sessionID: session.id)
        let replacement = try await dedicated.run(
            { try await $0.rows("SELECT pg_backend_pid()", logger: logger).first?.int(0) },
            otherwise: { nil })
        #expect(replacement != nil && replacement != pid)

        // Unused for its idle timeout, it is closed; closing the store closes it for good.
        dedicated.closeIfIdle(now: .now + dedicated.idleTimeout)
        #expect(!dedicated.isIdle)
        try await one.close()
        try await two.close()
        #expect(!dedicated.isIdle)
    }

    /// Looks the session up until `connection` is open and idle, for up to 30 s. The connection is
    /// opened by lookups: an attempt that failed (a busy test cluster can run out of connections) is
    /// made again by a later lookup, at most once per retry interval. Every lookup must answer.
    private func lookUpUntilIdle(
        _ connection: PostgresDedicatedConnection, in store: PostgresStore, tokenHash: [UInt8], sessionID: String
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !connection.isIdle {
            guard ContinuousClock.now < deadline else {
                Issue.record("the dedicated connection did not open within 30 s")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
            #expect(try await store.sessionContext(tokenHash: tokenHash)?.session.id == sessionID)
        }
    }

    @Test("Two nodes cleaning at once delete every expired row exactly once")
    func concurrentCleanup() async throws {
        let (one, two, project) = try await twoNodes()
        for _ in 0..<40 {
            _ = try await identify(one, project: project, sub: UUID().uuidString)
        }
        let later: Int64 = 1_795_000_000 + 3601
        let deleted = try await withThrowingTaskGroup(of: Int.self) { group in
            for store in [one, two] {
                group.addTask {
                    var total = 0
                    while true {
                        let counts = try await store.deleteExpired(now: later, batchSize: 5)
                        total += counts.sessions
                        if counts.sessions == 0 { return total }
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(deleted == 40)
        try await one.close()
        try await two.close()
    }

    @Test("Only the SHA-256 of session tokens and installation secrets is stored (bytea)")
    func hashesOnly() async throws {
        try await TestEnvironment.withApp(backend: .postgres) { environment, client in
            let secret = OpaqueToken.installationSecret()
            let reply = try await client.anonymous(secret: secret)
            let token = try #require(reply.sessionToken)
            let store = try #require(environment.store as? PostgresStore)
            let (tokens, secrets) = try await store.statement { postgres in
                (
                    try await postgres.rows("SELECT token_hash FROM sessions", logger: store.logger).map {
                        try $0.bytes(0)
                    },
                    try await postgres.rows("SELECT secret_hash FROM installations", logger: store.logger).map {
                        try $0.bytes(0)
                    }
                )
            }
            #expect(tokens == [OpaqueToken.sha256(token)])
            #expect(secrets == [OpaqueToken.sha256(secret)])
        }
    }

    @Test("An unreachable database answers 503 service_unavailable, within the timeout")
    func unreachable() async throws {
        var configuration = PostgresConfiguration()
        configuration.port = 1  // nothing listens there
        configuration.username = "nobody"
        configuration.tls = .disable
        configuration.minimumConnections = 0
        configuration.connectTimeout = .seconds(1)
        configuration.operationTimeout = .seconds(1)
        let store = PostgresStore(configuration: configuration, masterKeys: TestMasterKeys.keyring)
        let started = ContinuousClock.now
        await #expect(throws: CoreError.self) { try await store.ping() }
        do {
            _ = try await store.projectCount()
            Issue.record("expected a failure")
        } catch let error as CoreError {
            #expect(APIError(error).status == .serviceUnavailable)
            #expect(error.code == .serviceUnavailable)
        }
        #expect(ContinuousClock.now - started < .seconds(10))
        try await store.close()
    }

    @Test("URLs: host, port, credentials, database, TLS mode, pool and schema")
    func urls() throws {
        let configuration = try PostgresConfiguration(
            url:
                "postgresql://app:p%40ss@db.internal:6543/tessera?sslmode=require&pool_max=40&pool_min=2&schema=tenant_1"
        )
        #expect(configuration.host == "db.internal")
        #expect(configuration.port == 6543)
        #expect(configuration.username == "app")
        #expect(configuration.password == "p@ss")
        #expect(configuration.database == "tessera")
        #expect(configuration.tls == .require)
        #expect(configuration.maximumConnections == 40)
        #expect(configuration.minimumConnections == 2)
        #expect(configuration.schema == "tenant_1")
        #expect(try PostgresConfiguration(url: "postgres://u@127.0.0.1/db").tls == .disable)
        #expect(throws: ConfigurationError.self) { try PostgresConfiguration(url: "mysql://u@h/db") }
        #expect(throws: ConfigurationError.self) { try PostgresConfiguration(url: "postgres://u@h/db?schema=a;drop") }
        #expect(throws: ConfigurationError.self) { try PostgresConfiguration(url: "postgres://u@h/db?sslmode=maybe") }
        #expect(throws: ConfigurationError.self) { try PostgresConfiguration(url: "postgres://u@h/db?pool_max=-1") }
        guard case .postgres = try DatabaseURL("postgres://u@h/db") else {
            Issue.record("postgres:// must select PostgreSQL")
            return
        }
    }
}
