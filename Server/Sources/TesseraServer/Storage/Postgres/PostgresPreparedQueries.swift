import PostgresNIO

/// The hottest reads as named prepared statements.
///
/// postgres-nio's `query` sends an unnamed statement, which PostgreSQL parses, analyses and plans
/// on every call: during a heartbeat benchmark that was about 60 % of the database's CPU, against
/// 7 % for running the query. A named statement is prepared once per pooled connection.
enum PostgresPreparedQueries {
    /// The session (with its profile) whose token has this SHA-256 digest.
    struct SessionContextByTokenHash: PostgresPreparedStatement {
        static let name = "tessera_session_context_by_token_hash_v1"
        static let sql = """
            SELECT \(PostgresStore.contextColumns) FROM sessions s JOIN profiles p ON p.id = s.profile_id
            WHERE s.token_hash = $1
            """
        static let bindingDataTypes: [PostgresDataType] = [.bytea]
        typealias Row = PostgresRow

        let tokenHash: [UInt8]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(ByteBuffer(bytes: tokenHash))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
    }

    /// The session (with its profile) with this ID.
    struct SessionContextByID: PostgresPreparedStatement {
        static let name = "tessera_session_context_by_id_v1"
        static let sql = """
            SELECT \(PostgresStore.contextColumns) FROM sessions s JOIN profiles p ON p.id = s.profile_id
            WHERE s.id = $1
            """
        static let bindingDataTypes: [PostgresDataType] = [.text]
        typealias Row = PostgresRow

        let sessionID: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(sessionID)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
    }
}

extension PostgresClient {
    /// Runs a prepared statement and returns its first row, read fully.
    func first<Statement: PostgresPreparedStatement>(
        _ statement: Statement, logger: Logger
    ) async throws -> PostgresCells? where Statement.Row == PostgresRow {
        var first: PostgresCells?
        for try await row in try await execute(statement, logger: logger) where first == nil {
            first = PostgresCells(row)
        }
        return first
    }
}
