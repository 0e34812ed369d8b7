import Foundation

extension SQLiteStore {
    public var migrationSteps: [MigrationStep] { SQLiteMigrations.all }

    /// Applies the request's pending steps in one write transaction (the database's write lock is
    /// the migration lock), after an online copy of a database that has steps already (see
    /// ``backupPath(schemaVersion:now:)``).
    public func migrate(_ request: MigrationRequest) async throws -> MigrationReport {
        let plan = MigrationPlan(steps: request.steps ?? migrationSteps, release: request.release)
        var report = MigrationReport()
        if request.backup, path != ":memory:", !path.hasPrefix("file:") {
            let applied = try await appliedMigrations()
            try plan.checkCompatible(with: applied)
            if let latest = applied.map(\.version).max(), !plan.pending(request.kind, applied: applied).isEmpty {
                let backupPath = backupPath(schemaVersion: latest, now: request.now)
                try await backup(to: backupPath)
                logger.notice(
                    "Copied the database to \(backupPath) (mode 0600) before applying schema steps; restore it with the previous release if this one must be rolled back before any contract step."
                )
                report.backupPath = backupPath
            }
        }
        report.applied = try await writer.write { connection in
            try Self.prepareMigrationTable(connection)
            let applied = try Self.appliedMigrations(connection)
            let steps = try plan.steps(for: request, applied: applied)
            if request.kind == .contract, !steps.isEmpty {
                try plan.checkContract(steps, request: request, applied: applied, nodes: try Self.nodes(connection))
            }
            for step in steps {
                try connection.execute(step.sql)
                try connection.run(
                    """
                    INSERT INTO schema_migrations (version, applied_at, kind, required_release, applied_by)
                    VALUES (?, ?, ?, ?, ?)
                    """,
                    [
                        .init(step.version), .init(request.now), .init(step.kind.rawValue), .init(step.requiredRelease),
                        .init(request.release),
                    ])
            }
            if let node = request.node { try Self.upsert(node, connection) }
            return steps.map(\.version)
        }
        return report
    }

    /// The file beside the database that a migration's backup goes to:
    /// `tessera.sqlite.schema-12-20261129T020304Z.backup`.
    func backupPath(schemaVersion: Int64, now: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let stamp = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(now)))
        let base = "\(path).schema-\(schemaVersion)-\(stamp)"
        var candidate = base + ".backup"
        var counter = 1
        while FileManager.default.fileExists(atPath: candidate) {
            counter += 1
            candidate = "\(base)-\(counter).backup"
        }
        return candidate
    }

    public func appliedMigrations() async throws -> [AppliedMigration] {
        try readers.read { connection in
            guard try Self.hasTable("schema_migrations", connection) else { return [] }
            // An older release's table has no kinds yet: its steps are all expand steps.
            let columns = Set(try connection.query("PRAGMA table_info(schema_migrations)").map { $0.text(1) })
            guard columns.contains("kind") else {
                return try connection.query("SELECT version, applied_at FROM schema_migrations ORDER BY version").map {
                    AppliedMigration(
                        version: $0.int(0), kind: .expand, requiredRelease: nil, appliedAt: $0.int(1), appliedBy: nil)
                }
            }
            return try Self.appliedMigrations(connection)
        }
    }

    public func heartbeat(node: NodeRecord) async throws {
        try await writer.write { connection in try Self.upsert(node, connection) }
    }

    public func removeNode(id: String) async throws {
        try await writer.write { connection in
            _ = try connection.run("DELETE FROM nodes WHERE node_id = ?", [.init(id)])
        }
    }

    public func nodes() async throws -> [NodeRecord] {
        try readers.read { connection in try Self.nodes(connection) }
    }

    /// Creates `schema_migrations`, or adds the columns of step kinds to one an older release made
    /// (which writes only `version` and `applied_at`, and so keeps working on it).
    private static func prepareMigrationTable(_ connection: SQLiteConnection) throws {
        try connection.run(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL, kind TEXT NOT NULL DEFAULT 'expand',
                required_release TEXT, applied_by TEXT)
            """)
        let columns = Set(try connection.query("PRAGMA table_info(schema_migrations)").map { $0.text(1) })
        for (name, definition) in [
            ("kind", "kind TEXT NOT NULL DEFAULT 'expand'"), ("required_release", "required_release TEXT"),
            ("applied_by", "applied_by TEXT"),
        ] where !columns.contains(name) {
            try connection.run("ALTER TABLE schema_migrations ADD COLUMN \(definition)")
        }
    }

    private static func appliedMigrations(_ connection: SQLiteConnection) throws -> [AppliedMigration] {
        try connection.query(
            "SELECT version, kind, required_release, applied_at, applied_by FROM schema_migrations ORDER BY version"
        ).map { row in
            AppliedMigration(
                version: row.int(0), kind: MigrationKind(rawValue: row.text(1)) ?? .expand,
                requiredRelease: row.optionalText(2), appliedAt: row.int(3), appliedBy: row.optionalText(4))
        }
    }

    private static func hasTable(_ name: String, _ connection: SQLiteConnection) throws -> Bool {
        try connection.queryFirst("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.init(name)]) != nil
    }

    private static func nodes(_ connection: SQLiteConnection) throws -> [NodeRecord] {
        guard try hasTable("nodes", connection) else { return [] }
        return try connection.query(
            "SELECT node_id, release, schema_version, started_at, heartbeat_at FROM nodes ORDER BY started_at, node_id"
        ).map { row in
            NodeRecord(
                id: row.text(0), release: row.text(1), schemaVersion: row.int(2), startedAt: row.int(3),
                heartbeatAt: row.int(4))
        }
    }

    private static func upsert(_ node: NodeRecord, _ connection: SQLiteConnection) throws {
        try connection.run(
            """
            INSERT INTO nodes (node_id, release, schema_version, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (node_id) DO UPDATE SET release = excluded.release,
                schema_version = excluded.schema_version, heartbeat_at = excluded.heartbeat_at
            """,
            [
                .init(node.id), .init(node.release), .init(node.schemaVersion), .init(node.startedAt),
                .init(node.heartbeatAt),
            ])
    }
}
