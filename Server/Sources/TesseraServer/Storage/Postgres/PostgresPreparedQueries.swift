import PostgresNIO

/// The hottest reads as named prepared statements, each for a batch of keys (see ``PostgresReadBatcher``).
///
/// postgres-nio's `query` sends an unnamed statement, which PostgreSQL parses, analyses and plans
/// on every call: during a heartbeat benchmark that was about 60 % of the database's CPU, against
/// 7 % for running the query. A named statement is prepared once per pooled connection.
enum PostgresPreparedQueries {
    /// The sessions (with their profiles) whose tokens have these SHA-256 digests, each row ending
    /// with its digest.
    struct SessionContextsByTokenHash: PostgresPreparedStatement {
        static let name = "tessera_session_contexts_by_token_hash_v4"
        static let sql = """
            SELECT \(PostgresStore.contextColumns), s.token_hash FROM sessions s JOIN profiles p ON p.id = s.profile_id
            WHERE s.token_hash = ANY($1)
            """
        static let bindingDataTypes: [PostgresDataType] = [.byteaArray]
        typealias Row = PostgresRow

        let tokenHashes: [[UInt8]]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(tokenHashes.map { ByteBuffer(bytes: $0) })
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
    }

    /// The sessions (with their profiles) with these IDs.
    struct SessionContextsByID: PostgresPreparedStatement {
        static let name = "tessera_session_contexts_by_id_v4"
        static let sql = """
            SELECT \(PostgresStore.contextColumns) FROM sessions s JOIN profiles p ON p.id = s.profile_id
            WHERE s.id = ANY($1)
            """
        static let bindingDataTypes: [PostgresDataType] = [.textArray]
        typealias Row = PostgresRow

        let sessionIDs: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(sessionIDs)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
    }

    /// A transaction's events, into the outbox (see ``PostgresStore/append(_:in:logger:)``): the
    /// statement every change runs, prepared once per connection rather than parsed and planned
    /// each time.
    struct AppendEvents: PostgresPreparedStatement {
        static let name = "tessera_append_events_v3"
        static let sql = """
            INSERT INTO event_outbox
                (project_id, id, type, created_at, actor_type, actor_id, client_address, profile_id, data, reason,
                    trace_context)
            SELECT $1, e.id, e.type, $2, $3, $4, $5, NULLIF(e.profile_id, ''), e.data, $10, $11
            FROM unnest($6::text[], $7::text[], $8::text[], $9::text[]) WITH ORDINALITY AS e(id, type, profile_id, data, n)
            ORDER BY e.n
            """
        static let bindingDataTypes: [PostgresDataType] = [
            .text, .int8, .text, .text, .text, .textArray, .textArray, .textArray, .textArray, .text, .text,
        ]
        typealias Row = PostgresRow

        let batch: EventBatch
        /// The trace context of the request writing the events (``TraceScope``); nil when not traced.
        var traceContext: String? = nil

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 11)
            bindings.append(batch.projectID)
            bindings.append(batch.now)
            bindings.append(batch.origin.actor.kind.rawValue)
            bindings.append(batch.origin.actor.id)
            bindings.append(batch.origin.clientAddress)
            bindings.append(batch.drafts.map(\.id))
            bindings.append(batch.drafts.map(\.type.rawValue))
            bindings.append(batch.drafts.map { $0.profileID ?? "" })
            bindings.append(batch.drafts.map(\.data))
            bindings.append(batch.origin.reason)
            bindings.append(traceContext)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
    }
}

extension PostgresClient {
    /// Runs a prepared statement on a pooled connection and returns its rows.
    func rows<Statement: PostgresPreparedStatement>(
        _ statement: Statement, logger: Logger
    ) async throws -> [PostgresCells] where Statement.Row == PostgresRow {
        try await PostgresCells.collect(execute(statement, logger: logger))
    }
}

extension PostgresConnection {
    /// Runs a prepared statement on this connection and returns its rows.
    func rows<Statement: PostgresPreparedStatement>(
        _ statement: Statement, logger: Logger
    ) async throws -> [PostgresCells] where Statement.Row == PostgresRow {
        try await PostgresCells.collect(execute(statement, logger: logger))
    }
}

extension PostgresCells {
    /// Every row of an answer.
    static func collect(_ rows: some AsyncSequence<PostgresRow, any Error>) async throws -> [PostgresCells] {
        var cells: [PostgresCells] = []
        for try await row in rows { cells.append(PostgresCells(row)) }
        return cells
    }
}
