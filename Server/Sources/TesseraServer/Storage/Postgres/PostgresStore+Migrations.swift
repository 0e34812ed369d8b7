import Foundation
import Logging
import PostgresNIO

extension PostgresStore {
    public var migrationSteps: [MigrationStep] { PostgresMigrations.all }

    /// Refuses a server with `fsync` off (acknowledged writes could be lost on a crash), warns
    /// about `synchronous_commit=off`, then applies the request's pending steps exactly once, in one
    /// transaction under the schema's advisory migration lock.
    ///
    /// A database that does not answer yet, or not within the operation timeout, is tried again
    /// until ``PostgresConfiguration/startupTimeout``: many nodes starting at once on a busy
    /// database wait their turn instead of refusing to start. The wait for the lock itself is not
    /// timed: the nodes before this one take as long as their steps take.
    public func migrate(_ request: MigrationRequest) async throws -> MigrationReport {
        try await untilAvailable { try await self.checkDurability() }
        let logger = logger
        // A plain identifier, checked by PostgresConfiguration.
        let schema = configuration.schema
        let plan = MigrationPlan(steps: request.steps ?? migrationSteps, release: request.release)
        let maximumRetries = configuration.maximumRetries
        let applied = try await untilAvailable {
            try await Self.retrying(maximumRetries: maximumRetries, logger: logger) {
                try await self.client.withTransaction(logger: logger) { connection in
                    try await Self.migrate(request, plan: plan, schema: schema, in: connection, logger: logger)
                }
            }
        }
        return MigrationReport(applied: applied)
    }

    /// Runs `attempt` again, a second apart, while it fails with ``CoreError/unavailable``, for at
    /// most ``PostgresConfiguration/startupTimeout`` after the first failure (a long wait for the
    /// migration lock before it is not counted).
    private func untilAvailable<T: Sendable>(_ attempt: @Sendable () async throws -> T) async throws -> T {
        var deadline: ContinuousClock.Instant? = nil
        while true {
            do {
                return try await attempt()
            } catch let error as CoreError where error == .unavailable {
                let giveUp = deadline ?? ContinuousClock.now + configuration.startupTimeout
                deadline = giveUp
                guard ContinuousClock.now < giveUp else { throw error }
                logger.warning("the database does not answer yet: trying again before migrating")
                try await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Applies the pending steps under the schema's migration lock, in the caller's transaction.
    private static func migrate(
        _ request: MigrationRequest, plan: MigrationPlan, schema: String?, in connection: PostgresConnection,
        logger: Logger
    ) async throws -> [Int64] {
        // One lock per schema: nodes sharing a schema wait for each other, other schemas do not.
        let lockName = "\(PostgresMigrations.lockName):\(schema ?? "")"
        let free =
            try await connection.first(
                "SELECT pg_try_advisory_xact_lock(hashtextextended(\(lockName), 0))", logger: logger)?.bool(0)
            ?? false
        if !free {
            logger.notice("another node is migrating the schema: waiting for it to finish")
            try await connection.rows(
                "SELECT pg_advisory_xact_lock(hashtextextended(\(lockName), 0))", logger: logger)
        }
        if let schema {
            try await connection.rows("CREATE SCHEMA IF NOT EXISTS \(unescaped: schema)", logger: logger)
        }
        try await prepareMigrationTable(connection, logger: logger)
        let applied = try await appliedMigrations(connection, logger: logger)
        let steps = try plan.steps(for: request, applied: applied)
        if request.kind == .contract, !steps.isEmpty {
            let nodes = try await nodes(connection, logger: logger)
            try plan.checkContract(steps, request: request, applied: applied, nodes: nodes)
        }
        for step in steps {
            for statement in PostgresMigrations.statements(step.sql) {
                try await connection.rows(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            try await connection.rows(
                """
                INSERT INTO schema_migrations (version, applied_at, kind, required_release, applied_by)
                VALUES (\(step.version), \(request.now), \(step.kind.rawValue), \(step.requiredRelease),
                    \(request.release))
                """, logger: logger)
        }
        if let node = request.node { try await upsert(node, connection, logger: logger) }
        return steps.map(\.version)
    }

    /// Creates `schema_migrations`, or adds the columns of step kinds to one an older release made
    /// (which writes only `version` and `applied_at`, and so keeps working on it). The table is
    /// altered only when a column is missing: `ALTER TABLE` would hold every node's readiness
    /// query until the migration commits.
    private static func prepareMigrationTable(_ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.rows(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL, kind TEXT NOT NULL DEFAULT 'expand',
                required_release TEXT, applied_by TEXT)
            """, logger: logger)
        let columns = Set(
            try await connection.rows(
                """
                SELECT column_name::text FROM information_schema.columns
                WHERE table_schema = current_schema() AND table_name = 'schema_migrations'
                """, logger: logger
            ).map { try $0.text(0) })
        for (name, definition) in [
            ("kind", "kind TEXT NOT NULL DEFAULT 'expand'"), ("required_release", "required_release TEXT"),
            ("applied_by", "applied_by TEXT"),
        ] where !columns.contains(name) {
            try await connection.rows(
                PostgresQuery(unsafeSQL: "ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS \(definition)"),
                logger: logger)
        }
    }

    private static let appliedQuery: PostgresQuery =
        "SELECT version, kind, required_release, applied_at, applied_by FROM schema_migrations ORDER BY version"

    private static func applied(_ row: PostgresCells) throws -> AppliedMigration {
        AppliedMigration(
            version: try row.int(0), kind: MigrationKind(rawValue: try row.text(1)) ?? .expand,
            requiredRelease: try row.optionalText(2), appliedAt: try row.int(3), appliedBy: try row.optionalText(4))
    }

    private static func appliedMigrations(_ connection: PostgresConnection, logger: Logger) async throws
        -> [AppliedMigration]
    {
        try await connection.rows(appliedQuery, logger: logger).map(applied)
    }

    public func appliedMigrations() async throws -> [AppliedMigration] {
        let logger = logger
        return try await statement { client in
            // The schema's own table (the search path names the configured schema first).
            guard
                try await client.first("SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger)?.bool(0)
                    == true
            else { return [] }
            // An older release's table has no kinds yet: its steps are all expand steps.
            let hasKinds =
                try await client.first(
                    """
                    SELECT EXISTS (SELECT 1 FROM information_schema.columns
                        WHERE table_schema = current_schema() AND table_name = 'schema_migrations'
                        AND column_name = 'kind')
                    """, logger: logger)?.bool(0) ?? false
            guard hasKinds else {
                return try await client.rows(
                    "SELECT version, applied_at FROM schema_migrations ORDER BY version", logger: logger
                ).map {
                    AppliedMigration(
                        version: try $0.int(0), kind: .expand, requiredRelease: nil, appliedAt: try $0.int(1),
                        appliedBy: nil)
                }
            }
            return try await client.rows(Self.appliedQuery, logger: logger).map(Self.applied)
        }
    }

    public func heartbeat(node: NodeRecord) async throws {
        let logger = logger
        try await statement { client in
            _ = try await client.rows(
                """
                INSERT INTO nodes (node_id, release, schema_version, started_at, heartbeat_at)
                VALUES (\(node.id), \(node.release), \(node.schemaVersion), \(node.startedAt), \(node.heartbeatAt))
                ON CONFLICT (node_id) DO UPDATE SET release = excluded.release,
                    schema_version = excluded.schema_version, heartbeat_at = excluded.heartbeat_at
                """, logger: logger)
        }
    }

    public func removeNode(id: String) async throws {
        let logger = logger
        try await statement { client in
            _ = try await client.rows("DELETE FROM nodes WHERE node_id = \(id)", logger: logger)
        }
    }

    public func nodes() async throws -> [NodeRecord] {
        let logger = logger
        return try await transaction { connection in try await Self.nodes(connection, logger: logger) }
    }

    private static func nodes(_ connection: PostgresConnection, logger: Logger) async throws -> [NodeRecord] {
        guard try await connection.first("SELECT to_regclass('nodes') IS NOT NULL", logger: logger)?.bool(0) == true
        else { return [] }
        return try await connection.rows(
            "SELECT node_id, release, schema_version, started_at, heartbeat_at FROM nodes ORDER BY started_at, node_id",
            logger: logger
        ).map {
            NodeRecord(
                id: try $0.text(0), release: try $0.text(1), schemaVersion: try $0.int(2), startedAt: try $0.int(3),
                heartbeatAt: try $0.int(4))
        }
    }

    private static func upsert(_ node: NodeRecord, _ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.rows(
            """
            INSERT INTO nodes (node_id, release, schema_version, started_at, heartbeat_at)
            VALUES (\(node.id), \(node.release), \(node.schemaVersion), \(node.startedAt), \(node.heartbeatAt))
            ON CONFLICT (node_id) DO UPDATE SET release = excluded.release,
                schema_version = excluded.schema_version, heartbeat_at = excluded.heartbeat_at
            """, logger: logger)
    }
}
