import Foundation
public import Logging

/// The embedded SQLite backend: WAL, `synchronous=FULL`, foreign keys, one serialised writer with
/// group commit, and a pool of concurrent readers.
public final class SQLiteStore: TesseraStore {
    let writer: SQLiteWriter
    let readers: SQLiteReaderPool
    public let masterKeys: MasterKeyring
    public var eventTally: EventTally { writer.eventTally }
    public var eventSignal: EventSignal { writer.eventSignal }
    /// The database file.
    public let path: String
    /// Where the store reports what it did on its own (a backup before a migration).
    let logger: Logger

    /// Opens (and creates) the database at `path`; its directory is created when missing.
    ///
    /// - Parameters:
    ///   - path: the database file.
    ///   - masterKeys: the keys that seal identity secrets and signing keys.
    ///   - busyTimeoutMilliseconds: how long a connection waits for a lock before failing.
    ///   - logger: where the store reports database failures (never credentials or query parameters).
    public init(
        path: String, masterKeys: MasterKeyring, busyTimeoutMilliseconds: Int32 = 5000,
        logger: Logger = Logger(label: "tessera.sqlite")
    ) throws {
        self.masterKeys = masterKeys
        self.path = path
        self.logger = logger
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        // A new database is readable by its owner only (it holds emails and names); SQLite gives its
        // WAL and shared-memory files the database file's mode.
        Self.createPrivateFile(path)
        let connection = try SQLiteConnection(
            path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, queryOnly: false)
        let mode = try Self.switchToWAL(connection)
        guard mode?.lowercased() == "wal" else {
            throw SQLiteError(code: 1, message: "cannot switch \(path) to WAL mode")
        }
        self.writer = SQLiteWriter(connection: connection, logger: logger)
        self.readers = SQLiteReaderPool(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, logger: logger)
    }

    /// `PRAGMA journal_mode = WAL`, tried again while another connection holds the lock it needs.
    ///
    /// A new database starts in rollback-journal mode, where two processes opening it at once both
    /// hold a shared lock and both need the exclusive one to switch it to WAL: SQLite answers one of
    /// them `SQLITE_BUSY` at once, without waiting (waiting would deadlock), whatever the busy
    /// timeout. That process tries again (every 10 ms, for up to its busy timeout) once the other
    /// has switched the file, when the pragma only reads the mode.
    static func switchToWAL(_ connection: SQLiteConnection) throws(SQLiteError) -> String? {
        let attempts = max(1, Int(connection.busyTimeoutMilliseconds) / 10)
        var attempt = 1
        while true {
            do {
                return try connection.queryFirst("PRAGMA journal_mode = WAL")?.optionalText(0)
            } catch {
                guard error.primaryCode == 5, attempt < attempts else { throw error }
                attempt += 1
                usleep(10_000)
            }
        }
    }

    deinit {
        writer.stop()
        readers.close()
    }

    public func close() async throws {
        writer.stop()
        readers.close()
    }

    public func ping() async throws {
        _ = try readers.read { try $0.queryFirst("SELECT 1") }
    }

    public func schemaVersion() async throws -> Int64 {
        try readers.read { connection in
            guard
                try connection.queryFirst(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'") != nil
            else { return 0 }
            return try connection.queryFirst("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")?.int(0) ?? 0
        }
    }

    // MARK: Projects

    public func createProject(_ project: NewProject) async throws -> ProjectRecord {
        let keys = masterKeys
        return try await writer.write { connection in
            let record = project.record
            let settings = record.settings
            do {
                try connection.run(
                    """
                    INSERT INTO projects (\(Self.projectColumns), publishable_key_hash, secret_key_hash)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                    [
                        .init(record.id), .init(record.name), .init(record.slug),
                        .init(settings.allowUnverifiedIdentify),
                        .init(settings.requireAudience), .init(settings.expectedIssuer),
                        .init(settings.maxIdentityTokenLifetimeSeconds), .init(settings.leewaySeconds),
                        .init(settings.anonymousSessionMinutes), .init(settings.identifiedSessionMinutes),
                        .init(record.createdAt), .init(record.updatedAt),
                        .init(settings.rateLimits.anonymousStartsPerMinute),
                        .init(settings.rateLimits.failedIdentifiesPerMinute),
                        .init(settings.rateLimits.failedIdentifiesPerInstallationPerMinute),
                        .init(settings.sessionBinding.rawValue), .init(settings.dpopNonceRequired),
                        .init(settings.maxSessionsPerProfile), .init(settings.appAttest.mode.rawValue),
                        .init(settings.appAttest.storedAppIDs), .init(settings.appAttest.environment.rawValue),
                        .init(settings.appAttest.allowUnsupported), .init(project.publishableKeyHash),
                        .init(project.secretKeyHash),
                    ])
            } catch let error as SQLiteError where error.isUniqueViolation {
                throw CoreError.slugTaken
            }
            try connection.run(
                "INSERT INTO identity_secrets (project_id, kid, secret, created_at) VALUES (?, ?, ?, ?)",
                [
                    .init(record.id), .init(project.identitySecret.kid),
                    .init(
                        keys.sealIdentitySecret(
                            project.identitySecret.value, projectID: record.id, kid: project.identitySecret.kid)),
                    .init(project.identitySecret.createdAt),
                ])
            try connection.run(
                "INSERT INTO session_keys (project_id, kid, private_key, created_at) VALUES (?, ?, ?, ?)",
                [
                    .init(record.id), .init(project.sessionKey.kid),
                    .init(
                        keys.sealSessionKey(
                            project.sessionKey.privateKey, projectID: record.id, kid: project.sessionKey.kid)),
                    .init(project.sessionKey.createdAt),
                ])
            return record
        }
    }

    public func projectCount() async throws -> Int {
        try readers.read { Int(try $0.queryFirst("SELECT COUNT(*) FROM projects")?.int(0) ?? 0) }
    }

    public func project(id: String) async throws -> ProjectRecord? {
        try readers.read {
            try $0.queryFirst("SELECT \(Self.projectColumns) FROM projects WHERE id = ?", [.init(id)]).map(Self.project)
        }
    }

    public func project(publishableKeyHash: [UInt8]) async throws -> ProjectRecord? {
        try readers.read {
            try $0.queryFirst(
                "SELECT \(Self.projectColumns) FROM projects WHERE publishable_key_hash = ?",
                [.init(publishableKeyHash)]
            ).map(Self.project)
        }
    }

    public func project(secretKeyHash: [UInt8]) async throws -> ProjectRecord? {
        try readers.read {
            try $0.queryFirst(
                "SELECT \(Self.projectColumns) FROM projects WHERE secret_key_hash = ?", [.init(secretKeyHash)]
            )
            .map(Self.project)
        }
    }

    public func updateProjectSettings(
        projectID: String, now: Int64, origin: EventOrigin,
        change: @escaping @Sendable (ProjectRecord) throws -> ProjectSettings
    ) async throws -> ProjectRecord? {
        try await writer.write { connection -> Result<ProjectRecord?, any Error> in
            guard
                let old = try connection.queryFirst(
                    "SELECT \(Self.projectColumns) FROM projects WHERE id = ?", [.init(projectID)]
                ).map(Self.project)
            else { return .success(nil) }
            // Decided on the row as the writer's transaction holds it, not on a cached copy.
            let settings: ProjectSettings
            do { settings = try change(old) } catch { return .failure(error) }
            try connection.run(
                """
                UPDATE projects SET allow_unverified_identify = ?, require_audience = ?, expected_issuer = ?,
                    max_identity_token_lifetime_seconds = ?, leeway_seconds = ?, anonymous_session_minutes = ?,
                    identified_session_minutes = ?, rate_limit_anonymous_starts = ?,
                    rate_limit_failed_identifies = ?, rate_limit_failed_identifies_installation = ?,
                    session_binding = ?, dpop_nonce_required = ?, max_sessions_per_profile = ?, app_attest_mode = ?,
                    app_attest_app_ids = ?, app_attest_environment = ?, app_attest_allow_unsupported = ?, updated_at = ?
                WHERE id = ?
                """,
                [
                    .init(settings.allowUnverifiedIdentify), .init(settings.requireAudience),
                    .init(settings.expectedIssuer),
                    .init(settings.maxIdentityTokenLifetimeSeconds), .init(settings.leewaySeconds),
                    .init(settings.anonymousSessionMinutes), .init(settings.identifiedSessionMinutes),
                    .init(settings.rateLimits.anonymousStartsPerMinute),
                    .init(settings.rateLimits.failedIdentifiesPerMinute),
                    .init(settings.rateLimits.failedIdentifiesPerInstallationPerMinute),
                    .init(settings.sessionBinding.rawValue), .init(settings.dpopNonceRequired),
                    .init(settings.maxSessionsPerProfile), .init(settings.appAttest.mode.rawValue),
                    .init(settings.appAttest.storedAppIDs), .init(settings.appAttest.environment.rawValue),
                    .init(settings.appAttest.allowUnsupported), .init(now),
                    .init(projectID),
                ])
            let changed = EventRules.changedSettings(old.settings, settings)
            if !changed.isEmpty {
                var batch = EventBatch(projectID: projectID, origin: origin, now: now)
                batch.append(.projectUpdated(projectID: projectID, changed: changed))
                try Self.append(batch, in: connection)
            }
            return .success(
                try connection.queryFirst(
                    "SELECT \(Self.projectColumns) FROM projects WHERE id = ?", [.init(projectID)]
                )
                .map(Self.project))
        }.get()
    }

    public func identitySecrets(projectID: String) async throws -> [IdentitySecretRecord] {
        let rows = try readers.read {
            try $0.query(
                """
                SELECT kid, secret, created_at, last_used_at FROM identity_secrets WHERE project_id = ?
                ORDER BY created_at, kid
                """,
                [.init(projectID)])
        }
        return try rows.map {
            let kid = $0.text(0)
            return IdentitySecretRecord(
                kid: kid, value: try masterKeys.openIdentitySecret($0.text(1), projectID: projectID, kid: kid),
                createdAt: $0.int(2), lastUsedAt: $0.optionalInt(3))
        }
    }

    public func addIdentitySecret(projectID: String, secret: IdentitySecretRecord, limit: Int, origin: EventOrigin)
        async throws
    {
        try await writer.write { [masterKeys] connection in
            let count =
                try connection.queryFirst(
                    "SELECT COUNT(*) FROM identity_secrets WHERE project_id = ?", [.init(projectID)])?.int(0) ?? 0
            try Self.writeKeys(
                ProjectKeyProcedure.addIdentitySecret(secret, count: Int(count), limit: limit), projectID: projectID,
                keys: masterKeys, origin: origin, now: secret.createdAt, in: connection)
        }
    }

    public func deleteIdentitySecret(projectID: String, kid: String, now: Int64, origin: EventOrigin) async throws
        -> Bool
    {
        try await writer.write { [masterKeys] connection in
            let kids = try connection.query("SELECT kid FROM identity_secrets WHERE project_id = ?", [.init(projectID)])
                .map { $0.text(0) }
            guard let steps = try ProjectKeyProcedure.deleteIdentitySecret(kid: kid, kids: kids) else { return false }
            try Self.writeKeys(steps, projectID: projectID, keys: masterKeys, origin: origin, now: now, in: connection)
            return true
        }
    }

    public func sessionKeys(projectID: String) async throws -> [SessionKeyRecord] {
        let rows = try readers.read {
            try $0.query(
                "SELECT kid, private_key, created_at, retired_at FROM session_keys WHERE project_id = ? ORDER BY created_at",
                [.init(projectID)])
        }
        return try rows.map {
            let kid = $0.text(0)
            return SessionKeyRecord(
                kid: kid, privateKey: try masterKeys.openSessionKey($0.blob(1), projectID: projectID, kid: kid),
                createdAt: $0.int(2), retiredAt: $0.optionalInt(3))
        }
    }

    public func rotateSessionKey(projectID: String, newKey: SessionKeyRecord, now: Int64, origin: EventOrigin)
        async throws
    {
        try await writer.write { [masterKeys] connection in
            try Self.writeKeys(
                ProjectKeyProcedure.rotateSessionKey(newKey, now: now), projectID: projectID, keys: masterKeys,
                origin: origin, now: now, in: connection)
        }
    }

    /// Translates a change to the project's keys to SQL, sealing what it writes, then writes its events.
    private static func writeKeys(
        _ steps: [ProjectKeyStep], projectID: String, keys: MasterKeyring, origin: EventOrigin, now: Int64,
        in connection: SQLiteConnection
    ) throws {
        // Both kinds of key: the project, the kid, the sealed value, when it was created.
        func insert(_ table: String, _ column: String, kid: String, _ sealed: SQLiteValue, at createdAt: Int64) throws {
            try connection.run(
                "INSERT INTO \(table) (project_id, kid, \(column), created_at) VALUES (?, ?, ?, ?)",
                [.init(projectID), .init(kid), sealed, .init(createdAt)])
        }
        var batch = EventBatch(projectID: projectID, origin: origin, now: now)
        for step in steps {
            switch step {
            case .insertIdentitySecret(let secret):
                let sealed = keys.sealIdentitySecret(secret.value, projectID: projectID, kid: secret.kid)
                try insert("identity_secrets", "secret", kid: secret.kid, .init(sealed), at: secret.createdAt)
            case .deleteIdentitySecret(let kid):
                try connection.run(
                    "DELETE FROM identity_secrets WHERE project_id = ? AND kid = ?", [.init(projectID), .init(kid)])
            case .retireSessionKeys(let now):
                try connection.run(
                    "UPDATE session_keys SET retired_at = ? WHERE project_id = ? AND retired_at IS NULL",
                    [.init(now), .init(projectID)])
            case .deleteRetiredSessionKeys(let before):
                try connection.run(
                    "DELETE FROM session_keys WHERE project_id = ? AND retired_at IS NOT NULL AND retired_at < ?",
                    [.init(projectID), .init(before)])
            case .insertSessionKey(let key):
                let sealed = keys.sealSessionKey(key.privateKey, projectID: projectID, kid: key.kid)
                try insert("session_keys", "private_key", kid: key.kid, .init(sealed), at: key.createdAt)
            case .event(let draft):
                batch.append(draft)
            }
        }
        try append(batch, in: connection)
    }
}
