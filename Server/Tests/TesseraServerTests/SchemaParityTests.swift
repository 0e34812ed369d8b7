import PostgresNIO
import Testing

@testable import TesseraServer

/// The two backends' schemas, each migrated from nothing, hold the same tables, the same columns
/// with the same nullability and type family, and the same indexes by purpose (table, unique,
/// columns in order with an expression as `(expr)`, partial or not; names and dialects aside). A
/// migration written for one backend and forgotten, or written differently, for the other fails here.
@Suite("Schema parity: SQLite and PostgreSQL")
struct SchemaParityTests {
    /// What only one backend has, and why. Anything else that differs is drift.
    static let onlyPostgres: Set<String> = [
        // PostgreSQL numbers events after commit from an outbox (nodes write concurrently); SQLite's
        // one writer numbers them in the transaction that writes them.
        "table event_outbox",
        "column event_outbox.actor_id text null", "column event_outbox.actor_type text not null",
        "column event_outbox.client_address text null", "column event_outbox.created_at integer not null",
        "column event_outbox.data text not null", "column event_outbox.id text not null",
        "column event_outbox.position integer not null", "column event_outbox.profile_id text null",
        "column event_outbox.project_id text not null", "column event_outbox.reason text null",
        "column event_outbox.trace_context text null", "column event_outbox.type text not null",
        "index event_outbox unique (position)",
        // The migration ledger: a primary key on PostgreSQL, where nodes migrating at once insert
        // their versions under an advisory lock; SQLite's one writer needs no index there.
        "index schema_migrations unique (version)",
    ]
    static let onlySQLite: Set<String> = []

    /// The SQLite schema's facts, one string each.
    static func sqliteFacts(_ store: SQLiteStore) throws -> Set<String> {
        try store.readers.read { connection in
            var facts = Set<String>()
            let tables = try connection.query(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            ).map { $0.text(0) }
            for table in tables {
                facts.insert("table \(table)")
                for column in try connection.query(
                    "SELECT name, \"notnull\", pk, lower(type) FROM pragma_table_info(?)", [.init(table)])
                {
                    let notNull = column.int(1) == 1 || column.int(2) > 0
                    facts.insert(
                        "column \(table).\(column.text(0)) \(family(column.text(3))) \(notNull ? "not null" : "null")")
                }
                for index in try connection.query(
                    """
                    SELECT il.name, il."unique", il.partial,
                        (SELECT group_concat(coalesce(ii.name, '(expr)'), ',') FROM
                            (SELECT name FROM pragma_index_info(il.name) ORDER BY seqno) AS ii)
                    FROM pragma_index_list(?) AS il
                    """, [.init(table)])
                {
                    facts.insert(
                        indexFact(
                            table: table, unique: index.int(1) == 1, partial: index.int(2) == 1, columns: index.text(3))
                    )
                }
            }
            return facts
        }
    }

    /// The PostgreSQL schema's facts (the store's own schema), one string each.
    static func postgresFacts(_ store: PostgresStore) async throws -> Set<String> {
        try await store.transaction { connection in
            var facts = Set<String>()
            let logger = Logger(label: "schema-parity")
            for row in try await connection.rows(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()", logger: logger
            ) {
                facts.insert("table \(try row.text(0))")
            }
            for row in try await connection.rows(
                """
                SELECT table_name, column_name, is_nullable = 'NO', data_type FROM information_schema.columns
                WHERE table_schema = current_schema()
                """, logger: logger)
            {
                let notNull = try row.bool(2)
                facts.insert(
                    "column \(try row.text(0)).\(try row.text(1)) \(family(try row.text(3))) \(notNull ? "not null" : "null")"
                )
            }
            for row in try await connection.rows(
                """
                SELECT t.relname, ix.indisunique, ix.indpred IS NOT NULL,
                    string_agg(CASE WHEN k.attnum = 0 THEN '(expr)' ELSE a.attname END, ',' ORDER BY k.ord)
                FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class t ON t.oid = ix.indrelid
                    JOIN pg_namespace n ON n.oid = t.relnamespace
                    CROSS JOIN LATERAL unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
                    LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
                WHERE n.nspname = current_schema()
                GROUP BY t.relname, i.relname, ix.indisunique, ix.indpred IS NOT NULL
                """, logger: logger)
            {
                facts.insert(
                    indexFact(
                        table: try row.text(0), unique: try row.bool(1),
                        partial: try row.bool(2), columns: try row.text(3)))
            }
            return facts
        }
    }

    static func indexFact(table: String, unique: Bool, partial: Bool, columns: String) -> String {
        "index \(table) \(unique ? "unique " : "")(\(columns.split(separator: ",").joined(separator: ", ")))"
            + (partial ? " partial" : "")
    }

    /// A declared type's family: what both backends store alike.
    static func family(_ type: String) -> String {
        switch type.lowercased() {
        case "integer", "bigint", "smallint", "boolean", "int": return "integer"
        case "text", "character varying": return "text"
        case "blob", "bytea": return "blob"
        case "real", "double precision": return "real"
        case let other: return other
        }
    }

    @Test(
        "Tables, columns and indexes by purpose are the same on both backends",
        .enabled(if: PostgresTestDatabase.isConfigured))
    func parity() async throws {
        let sqlite = try #require(try await TestEnvironment.make(backend: .sqlite).store as? SQLiteStore)
        let postgres = try #require(try await TestEnvironment.make(backend: .postgres).store as? PostgresStore)
        let (lite, pg) = (try Self.sqliteFacts(sqlite), try await Self.postgresFacts(postgres))
        #expect(lite.count > 100 && pg.count > 100, "the catalogs were read")
        let missingOnPostgres = lite.subtracting(pg).subtracting(Self.onlySQLite)
        let missingOnSQLite = pg.subtracting(lite).subtracting(Self.onlyPostgres)
        #expect(missingOnPostgres.isEmpty, "only on SQLite: \(missingOnPostgres.sorted())")
        #expect(missingOnSQLite.isEmpty, "only on PostgreSQL: \(missingOnSQLite.sorted())")
        // The exceptions are real: each is still a difference (an exception that no longer differs goes).
        #expect(
            Self.onlyPostgres.isSubset(of: pg.subtracting(lite)),
            "\(Self.onlyPostgres.subtracting(pg.subtracting(lite)))")
        #expect(Self.onlySQLite.isSubset(of: lite.subtracting(pg)))
    }

    @Test("The comparison sees drift: an index or a nullability only one backend has")
    func seesDrift() async throws {
        let store = try #require(try await TestEnvironment.make(backend: .sqlite).store as? SQLiteStore)
        let before = try Self.sqliteFacts(store)
        try await store.writer.write { connection in
            try connection.execute("CREATE INDEX drift ON profiles (project_id, lower(name)) WHERE name IS NOT NULL")
            try connection.execute("ALTER TABLE profiles ADD COLUMN drift_column TEXT NOT NULL DEFAULT ''")
        }
        let after = try Self.sqliteFacts(store)
        #expect(
            after.subtracting(before)
                == ["index profiles (project_id, (expr)) partial", "column profiles.drift_column text not null"])
    }
}
