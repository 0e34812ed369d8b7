import Foundation
public import Logging
import NIOPosix
import PostgresNIO
import Synchronization

/// The PostgreSQL backend, for several server processes on one database.
///
/// Every method is one transaction or one statement; extensions and revokes are single
/// conditional `UPDATE`s; races between nodes are settled by unique keys and row locks, and a
/// transaction that lost one runs again. Only hashes of session tokens and installation secrets
/// are stored. A database that cannot be reached makes operations fail with
/// `service_unavailable` after ``PostgresConfiguration/operationTimeout``, and the pool
/// reconnects by itself when it returns.
///
/// The store owns its `PostgresClient` and runs the client's `run()` from the moment it is opened
/// until ``close()``; the server's service group closes the store when it shuts down. (Migrations
/// run before the service group starts, and a client whose `run()` is not running hangs every query.)
public final class PostgresStore: TesseraStore {
    let client: PostgresClient
    public let eventTally = EventTally()
    public let eventSignal = EventSignal()
    let configuration: PostgresConfiguration
    let logger: Logger
    public let masterKeys: MasterKeyring
    /// Expires operations that outlive ``PostgresConfiguration/operationTimeout``.
    let watchdog: OperationWatchdog
    /// Session lookups by token digest and by ID, batched.
    let contextsByTokenHash: PostgresReadBatcher<[UInt8], SessionContext>
    let contextsByID: PostgresReadBatcher<String, SessionContext>
    /// The connections the two batchers keep outside the pool (each falls back to the pool).
    let dedicatedConnections: [PostgresDedicatedConnection]
    private let runner: Task<Void, Never>
    private let sweeper: Task<Void, Never>
    /// Wakes the sequencer: after a commit that wrote events, a second after a failed run, and
    /// every ``sequencerTick`` for the events a node committed and could not sequence before it died.
    let sequencerSignal: AsyncStream<Void>.Continuation
    /// How often the sequencer runs without a commit of this node.
    static let sequencerTick = Duration.seconds(30)
    /// Moves committed events from the outbox into the feed (``sequenceEvents(projectID:)``).
    private let sequencer = Mutex<Task<Void, Never>?>(nil)

    /// Opens a pool to the database; connections are made when first needed.
    ///
    /// - Parameters:
    ///   - configuration: the server, pool limits and timeouts.
    ///   - masterKeys: the keys that seal identity secrets and signing keys.
    ///   - logger: where the store reports database failures (never credentials or query parameters).
    public init(
        configuration: PostgresConfiguration, masterKeys: MasterKeyring,
        logger: Logger = Logger(label: "tessera.postgres")
    ) {
        self.masterKeys = masterKeys
        let tls: PostgresClient.Configuration.TLS
        switch configuration.tls {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(.makeClientConfiguration())
        case .require: tls = .require(.makeClientConfiguration())
        }
        var client = PostgresClient.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: tls)
        client.options.minimumConnections = configuration.minimumConnections
        client.options.maximumConnections = configuration.maximumConnections
        client.options.connectionIdleTimeout = configuration.connectionIdleTimeout
        client.options.connectTimeout = configuration.connectTimeout
        client.options.keepAliveBehavior = .init(frequency: .seconds(30))
        if let schema = configuration.schema {
            client.options.additionalStartupParameters = [("search_path", schema)]
        }
        // The pool reports every failed connection attempt at info; keep only warnings and worse.
        var background = logger
        background.logLevel = max(logger.logLevel, .warning)
        let postgres = PostgresClient(
            configuration: client, eventLoopGroup: Self.eventLoopGroup, backgroundLogger: background)
        let watchdog = OperationWatchdog()
        self.client = postgres
        self.configuration = configuration
        self.logger = logger
        self.watchdog = watchdog
        let expiry = ReadBatchExpiry(watchdog: watchdog, timeout: configuration.operationTimeout) {
            logger.warning("database operation timed out")
            return Self.unavailable
        }
        let byTokenHash = Self.dedicatedConnection(configuration, client: client, logger: background)
        let byID = Self.dedicatedConnection(configuration, client: client, logger: background)
        let dedicated = [byTokenHash, byID]
        self.dedicatedConnections = dedicated
        let lookups = SessionContextLookups(
            client: postgres, expiry: expiry, maximumRetries: configuration.maximumRetries, logger: logger)
        self.contextsByTokenHash = lookups.batcher(
            PostgresPreparedQueries.SessionContextsByTokenHash.init(tokenHashes:), on: byTokenHash
        ) { row, _ in try row.bytes(Self.contextColumnCount) }
        self.contextsByID = lookups.batcher(PostgresPreparedQueries.SessionContextsByID.init(sessionIDs:), on: byID) {
            _, context in context.session.id
        }
        self.runner = Task { await postgres.run() }
        let (signals, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.sequencerSignal = signal
        self.sweeper = Task {
            await withDiscardingTaskGroup { group in
                group.addTask { await watchdog.run() }
                group.addTask {
                    // Feed reads and the dispatcher's fan-out number what committed before them, so
                    // this tick only moves the events a node committed and could not number before
                    // it died: rarely, so an idle server sleeps.
                    while (try? await Task.sleep(for: Self.sequencerTick)) != nil { signal.yield() }
                }
                group.addTask {
                    while (try? await Task.sleep(for: .seconds(5))) != nil {
                        for connection in dedicated { connection.closeIfIdle() }
                    }
                }
            }
        }
        sequencer.withLock {
            $0 = Task { [weak self] in
                for await _ in signals {
                    // Commits that land in the next 20 milliseconds are moved by the same run: one
                    // sequencer transaction (and fsync) per 20 ms under load, not per commit.
                    try? await Task.sleep(for: .milliseconds(20))
                    guard let self else { return }
                    do {
                        try await self.sequenceEvents()
                    } catch {
                        self.logger.warning("event sequencer failed; it runs again within a second")
                        Task {
                            try await Task.sleep(for: .seconds(1))
                            signal.yield()
                        }
                    }
                }
            }
        }
    }

    /// What the batched session lookups share: the pool to fall back on, the deadline of a batch and
    /// the retries of a read.
    private struct SessionContextLookups {
        let client: PostgresClient
        let expiry: ReadBatchExpiry
        let maximumRetries: Int
        let logger: Logger

        /// Batches of `query` on `connection` (the pool when it cannot), each session filed under the
        /// key `key` reads from its row.
        func batcher<Key: Hashable & Sendable, Query: PostgresPreparedStatement>(
            _ query: @escaping @Sendable ([Key]) -> Query, on connection: PostgresDedicatedConnection,
            key: @escaping @Sendable (PostgresCells, SessionContext) throws -> Key
        ) -> PostgresReadBatcher<Key, SessionContext> where Query.Row == PostgresRow {
            let (client, retries, logger) = (client, maximumRetries, logger)
            return PostgresReadBatcher(executor: PostgresStore.batchExecutor, expiry: expiry) { keys in
                try await PostgresStore.retrying(maximumRetries: retries, logger: logger) {
                    let statement = query(keys)
                    let rows = try await connection.run(
                        { try await $0.rows(statement, logger: logger) },
                        otherwise: { try await client.rows(statement, logger: logger) })
                    var contexts: [Key: SessionContext] = [:]
                    for row in rows {
                        let context = try PostgresStore.context(row)
                        contexts[try key(row, context)] = context
                    }
                    return contexts
                }
            }
        }
    }

    /// A connection for one batcher, configured like the pool's own (see ``PostgresDedicatedConnection``).
    private static func dedicatedConnection(
        _ configuration: PostgresConfiguration, client: PostgresClient.Configuration, logger: Logger
    ) -> PostgresDedicatedConnection {
        // Without a TLS context of its own it would speak plain text where the pool would not: then
        // there is no dedicated connection (every read goes through the pool).
        let tls: PostgresConnection.Configuration.TLS?
        switch configuration.tls {
        case .disable: tls = .disable
        case .prefer: tls = (try? NIOSSLContext(configuration: .makeClientConfiguration())).map { .prefer($0) }
        case .require: tls = (try? NIOSSLContext(configuration: .makeClientConfiguration())).map { .require($0) }
        }
        var connection = PostgresConnection.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: tls ?? .disable)
        connection.options.connectTimeout = TimeAmount(configuration.connectTimeout)
        connection.options.additionalStartupParameters = client.options.additionalStartupParameters
        let dedicated = PostgresDedicatedConnection(
            configuration: connection, eventLoop: eventLoopGroup.next(), logger: logger,
            stuckTimeout: configuration.operationTimeout)
        if tls == nil { dedicated.shutDown() }
        return dedicated
    }

    /// The event loop of every PostgreSQL connection in the process, shared by all stores and, like
    /// SwiftNIO's singleton loops, never shut down.
    ///
    /// On the HTTP server's loops a database answer waited for the request work already queued
    /// there (a millisecond and more under load), and a batched session lookup waits for the batch
    /// ahead of it, so that wait was on every heartbeat's path. On a loop of their own the answers
    /// are read at once (heartbeats per second on PostgreSQL: see docs/PERFORMANCE.md).
    static let eventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    /// Runs the batched lookups' task on that loop.
    static let batchExecutor = EventLoopTaskExecutor(eventLoopGroup.next())

    /// Opens the store a `postgres://` URL names.
    public convenience init(
        url: String, masterKeys: MasterKeyring, logger: Logger = Logger(label: "tessera.postgres")
    ) throws {
        self.init(configuration: try PostgresConfiguration(url: url), masterKeys: masterKeys, logger: logger)
    }

    deinit {
        for connection in dedicatedConnections { connection.shutDown() }
        sequencerSignal.finish()
        runner.cancel()
        sweeper.cancel()
    }

    public func close() async throws {
        sequencerSignal.finish()
        if let sequencer = sequencer.withLock({ $0 }) { await sequencer.value }
        for connection in dedicatedConnections { connection.shutDown() }
        runner.cancel()
        await runner.value
        sweeper.cancel()
        await sweeper.value
    }

    /// The durability settings of the server: `fsync` must be on.
    func checkDurability() async throws {
        let logger = logger
        let (fsync, synchronousCommit) = try await statement { client in
            let fsync = try await client.first("SHOW fsync", logger: logger)?.text(0) ?? "on"
            let commit = try await client.first("SHOW synchronous_commit", logger: logger)?.text(0) ?? "on"
            return (fsync, commit)
        }
        guard fsync.lowercased() != "off" else {
            throw ConfigurationError(
                "PostgreSQL runs with fsync=off: acknowledged sessions could be lost in a crash. Turn fsync on.")
        }
        if synchronousCommit.lowercased() == "off" {
            logger.warning(
                "PostgreSQL runs with synchronous_commit=off: a crash can lose the last acknowledged writes")
        }
    }

    public func ping() async throws {
        let logger = logger
        try await statement { client in _ = try await client.rows("SELECT 1", logger: logger) }
    }

    public func schemaVersion() async throws -> Int64 {
        let logger = logger
        return try await statement { client in
            // The schema's own table (the search path names the configured schema first).
            guard
                try await client.first("SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger)?.bool(0)
                    == true
            else { return 0 }
            return try await client.first("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", logger: logger)?
                .int(0) ?? 0
        }
    }

    // MARK: Projects

    public func createProject(_ project: NewProject) async throws -> ProjectRecord {
        let keys = masterKeys
        let logger = logger
        return try await transaction { connection in
            let record = project.record
            let settings = record.settings
            do {
                try await connection.rows(
                    """
                    INSERT INTO projects (\(unescaped: Self.projectColumns), publishable_key_hash, secret_key_hash)
                    VALUES (\(record.id), \(record.name), \(record.slug), \(settings.allowUnverifiedIdentify),
                        \(settings.requireAudience), \(settings.expectedIssuer),
                        \(settings.maxIdentityTokenLifetimeSeconds), \(settings.leewaySeconds),
                        \(settings.anonymousSessionMinutes), \(settings.identifiedSessionMinutes),
                        \(record.createdAt), \(record.updatedAt), \(settings.rateLimits.anonymousStartsPerMinute),
                        \(settings.rateLimits.failedIdentifiesPerMinute),
                        \(settings.rateLimits.failedIdentifiesPerInstallationPerMinute),
                        \(settings.sessionBinding.rawValue), \(settings.dpopNonceRequired),
                        \(settings.maxSessionsPerProfile), \(settings.appAttest.mode.rawValue),
                        \(settings.appAttest.storedAppIDs), \(settings.appAttest.environment.rawValue),
                        \(settings.appAttest.allowUnsupported), \(project.publishableKeyHash.bytea),
                        \(project.secretKeyHash.bytea))
                    """, logger: logger)
            } catch  where Self.isUniqueViolation(error, constraint: "projects_slug_key") {
                throw CoreError.slugTaken
            }
            let secret = project.identitySecret
            let sealedSecret = keys.sealIdentitySecret(secret.value, projectID: record.id, kid: secret.kid)
            try await connection.rows(
                """
                INSERT INTO identity_secrets (project_id, kid, secret, created_at)
                VALUES (\(record.id), \(secret.kid), \(sealedSecret), \(secret.createdAt))
                """, logger: logger)
            let key = project.sessionKey
            let sealedKey = keys.sealSessionKey(key.privateKey, projectID: record.id, kid: key.kid)
            try await connection.rows(
                """
                INSERT INTO session_keys (project_id, kid, private_key, created_at)
                VALUES (\(record.id), \(key.kid), \(sealedKey.bytea), \(key.createdAt))
                """, logger: logger)
            return record
        }
    }

    public func projectCount() async throws -> Int {
        let logger = logger
        return try await statement { client in
            Int(try await client.first("SELECT COUNT(*) FROM projects", logger: logger)?.int(0) ?? 0)
        }
    }

    public func project(id: String) async throws -> ProjectRecord? {
        try await project(where: "id = \(id)")
    }

    public func project(publishableKeyHash: [UInt8]) async throws -> ProjectRecord? {
        try await project(where: "publishable_key_hash = \(publishableKeyHash.bytea)")
    }

    public func project(secretKeyHash: [UInt8]) async throws -> ProjectRecord? {
        try await project(where: "secret_key_hash = \(secretKeyHash.bytea)")
    }

    private func project(where condition: PostgresQuery) async throws -> ProjectRecord? {
        let logger = logger
        var query: PostgresQuery = "SELECT \(unescaped: Self.projectColumns) FROM projects WHERE "
        query.sql += condition.sql
        query.binds = condition.binds
        let select = query
        return try await statement { client in try await client.first(select, logger: logger).map(Self.project) }
    }

    public func updateProjectSettings(
        projectID: String, now: Int64, origin: EventOrigin,
        change: @escaping @Sendable (ProjectRecord) throws -> ProjectSettings
    ) async throws -> ProjectRecord? {
        let logger = logger
        return try await transaction { connection -> Result<ProjectRecord?, any Error> in
            guard
                let old = try await connection.first(
                    "SELECT \(unescaped: Self.projectColumns) FROM projects WHERE id = \(projectID) FOR UPDATE",
                    logger: logger
                ).map(Self.project)
            else { return .success(nil) }
            // Decided on the row as locked, not on a cached copy: a change committed meanwhile stays.
            // A refusal is answered as thrown (nothing was written), not as a database failure.
            let settings: ProjectSettings
            do { settings = try change(old) } catch { return .failure(error) }
            let updated = try await connection.first(
                """
                UPDATE projects SET allow_unverified_identify = \(settings.allowUnverifiedIdentify),
                    require_audience = \(settings.requireAudience), expected_issuer = \(settings.expectedIssuer),
                    max_identity_token_lifetime_seconds = \(settings.maxIdentityTokenLifetimeSeconds),
                    leeway_seconds = \(settings.leewaySeconds),
                    anonymous_session_minutes = \(settings.anonymousSessionMinutes),
                    identified_session_minutes = \(settings.identifiedSessionMinutes),
                    rate_limit_anonymous_starts = \(settings.rateLimits.anonymousStartsPerMinute),
                    rate_limit_failed_identifies = \(settings.rateLimits.failedIdentifiesPerMinute),
                    rate_limit_failed_identifies_installation
                        = \(settings.rateLimits.failedIdentifiesPerInstallationPerMinute),
                    session_binding = \(settings.sessionBinding.rawValue),
                    dpop_nonce_required = \(settings.dpopNonceRequired),
                    max_sessions_per_profile = \(settings.maxSessionsPerProfile),
                    app_attest_mode = \(settings.appAttest.mode.rawValue),
                    app_attest_app_ids = \(settings.appAttest.storedAppIDs),
                    app_attest_environment = \(settings.appAttest.environment.rawValue),
                    app_attest_allow_unsupported = \(settings.appAttest.allowUnsupported),
                    updated_at = \(now)
                WHERE id = \(projectID)
                RETURNING \(unescaped: Self.projectColumns)
                """, logger: logger
            ).map(Self.project)
            let changed = EventRules.changedSettings(old.settings, settings)
            if !changed.isEmpty {
                var batch = EventBatch(projectID: projectID, origin: origin, now: now)
                batch.append(.projectUpdated(projectID: projectID, changed: changed))
                try await Self.append(batch, in: connection, logger: logger)
            }
            return .success(updated)
        }.get()
    }

    public func identitySecrets(projectID: String) async throws -> [IdentitySecretRecord] {
        let logger = logger
        let sealed = try await statement { client in
            try await client.rows(
                """
                SELECT kid, secret, created_at, last_used_at FROM identity_secrets WHERE project_id = \(projectID)
                ORDER BY created_at, kid
                """, logger: logger
            ).map {
                IdentitySecretRecord(
                    kid: try $0.text(0), value: try $0.text(1), createdAt: try $0.int(2),
                    lastUsedAt: try $0.optionalInt(3))
            }
        }
        // Opened outside the retried statement: a key that does not open is no database failure.
        return try sealed.map {
            var record = $0
            record.value = try masterKeys.openIdentitySecret($0.value, projectID: projectID, kid: $0.kid)
            return record
        }
    }

    public func addIdentitySecret(projectID: String, secret: IdentitySecretRecord, limit: Int, origin: EventOrigin)
        async throws
    {
        let (logger, keys) = (logger, masterKeys)
        try await transaction { connection in
            // Locking the project serialises concurrent additions, so the limit holds across nodes.
            try await connection.rows("SELECT id FROM projects WHERE id = \(projectID) FOR UPDATE", logger: logger)
            let count =
                try await connection.first(
                    "SELECT COUNT(*) FROM identity_secrets WHERE project_id = \(projectID)", logger: logger)?.int(0)
                ?? 0
            try await Self.writeKeys(
                ProjectKeyProcedure.addIdentitySecret(secret, count: Int(count), limit: limit), projectID: projectID,
                keys: keys, origin: origin, now: secret.createdAt, in: connection, logger: logger)
        }
    }

    public func deleteIdentitySecret(projectID: String, kid: String, now: Int64, origin: EventOrigin) async throws
        -> Bool
    {
        let (logger, keys) = (logger, masterKeys)
        return try await transaction { connection in
            try await connection.rows("SELECT id FROM projects WHERE id = \(projectID) FOR UPDATE", logger: logger)
            let kids = try await connection.rows(
                "SELECT kid FROM identity_secrets WHERE project_id = \(projectID)", logger: logger
            ).map { try $0.text(0) }
            guard let steps = try ProjectKeyProcedure.deleteIdentitySecret(kid: kid, kids: kids) else { return false }
            try await Self.writeKeys(
                steps, projectID: projectID, keys: keys, origin: origin, now: now, in: connection, logger: logger)
            return true
        }
    }

    public func sessionKeys(projectID: String) async throws -> [SessionKeyRecord] {
        let logger = logger
        let sealed = try await statement { client in
            try await client.rows(
                """
                SELECT kid, private_key, created_at, retired_at FROM session_keys WHERE project_id = \(projectID)
                ORDER BY created_at
                """, logger: logger
            ).map {
                SessionKeyRecord(
                    kid: try $0.text(0), privateKey: try $0.bytes(1), createdAt: try $0.int(2),
                    retiredAt: try $0.optionalInt(3))
            }
        }
        return try sealed.map {
            var record = $0
            record.privateKey = try masterKeys.openSessionKey($0.privateKey, projectID: projectID, kid: $0.kid)
            return record
        }
    }

    public func rotateSessionKey(projectID: String, newKey: SessionKeyRecord, now: Int64, origin: EventOrigin)
        async throws
    {
        let (logger, keys) = (logger, masterKeys)
        try await transaction { connection in
            try await connection.rows("SELECT id FROM projects WHERE id = \(projectID) FOR UPDATE", logger: logger)
            try await Self.writeKeys(
                ProjectKeyProcedure.rotateSessionKey(newKey, now: now), projectID: projectID, keys: keys,
                origin: origin, now: now, in: connection, logger: logger)
        }
    }

    /// Translates a change to the project's keys to SQL, sealing what it writes, then writes its events.
    private static func writeKeys(
        _ steps: [ProjectKeyStep], projectID: String, keys: MasterKeyring, origin: EventOrigin, now: Int64,
        in connection: PostgresConnection, logger: Logger
    ) async throws {
        var batch = EventBatch(projectID: projectID, origin: origin, now: now)
        for step in steps {
            switch step {
            case .insertIdentitySecret(let secret):
                let sealed = keys.sealIdentitySecret(secret.value, projectID: projectID, kid: secret.kid)
                try await connection.rows(
                    """
                    INSERT INTO identity_secrets (project_id, kid, secret, created_at)
                    VALUES (\(projectID), \(secret.kid), \(sealed), \(secret.createdAt))
                    """, logger: logger)
            case .deleteIdentitySecret(let kid):
                try await connection.rows(
                    "DELETE FROM identity_secrets WHERE project_id = \(projectID) AND kid = \(kid)", logger: logger)
            case .retireSessionKeys(let now):
                try await connection.rows(
                    """
                    UPDATE session_keys SET retired_at = \(now) WHERE project_id = \(projectID) AND retired_at IS NULL
                    """, logger: logger)
            case .deleteRetiredSessionKeys(let before):
                try await connection.rows(
                    """
                    DELETE FROM session_keys
                    WHERE project_id = \(projectID) AND retired_at IS NOT NULL AND retired_at < \(before)
                    """, logger: logger)
            case .insertSessionKey(let key):
                let sealed = keys.sealSessionKey(key.privateKey, projectID: projectID, kid: key.kid)
                try await connection.rows(
                    """
                    INSERT INTO session_keys (project_id, kid, private_key, created_at)
                    VALUES (\(projectID), \(key.kid), \(sealed.bytea), \(key.createdAt))
                    """, logger: logger)
            case .event(let draft):
                batch.append(draft)
            }
        }
        try await append(batch, in: connection, logger: logger)
    }
}
