import PostgresNIO

/// The outbox: events written in the transaction of their change, and the feed that reads them.
extension PostgresStore {
    static let eventColumns =
        "id, project_id, sequence, type, created_at, actor_type, actor_id, client_address, profile_id, data"

    /// Writes `batch`'s events with the project's next sequences, in one statement; call it LAST in
    /// the transaction, just before the commit.
    ///
    /// Sequences come from the project's row in `event_counters`, incremented here with an upsert:
    /// the row stays locked until this transaction commits or rolls back, so a second transaction of
    /// the same project waits here and takes the next number only after the first one's events are
    /// visible. Sequences therefore become visible in order, and a reader that has seen `N` will
    /// never later find a committed event below `N`. A plain `BIGSERIAL` (or any sequence object)
    /// would not give that: `nextval` is handed out at insert time without a lock, so transaction A
    /// can take 5, transaction B take 6 and commit first; a reader polling `after=4` sees 6, moves on
    /// to `after=6`, and skips 5 when A commits a moment later (and a rolled-back transaction leaves
    /// a gap). Taking the counter last keeps the lock short: only the commit's own latency.
    static func append(_ batch: EventBatch, in connection: PostgresConnection, logger: Logger) async throws {
        guard !batch.drafts.isEmpty else { return }
        EventCollector.current?.add(batch)
        let count = Int64(batch.drafts.count)
        let ids = batch.drafts.map(\.id)
        let types = batch.drafts.map(\.type.rawValue)
        let profiles = batch.drafts.map { $0.profileID ?? "" }
        let data = batch.drafts.map(\.data)
        try await connection.rows(
            """
            WITH counter AS (
                INSERT INTO event_counters AS c (project_id, last_sequence) VALUES (\(batch.projectID), \(count))
                ON CONFLICT (project_id) DO UPDATE SET last_sequence = c.last_sequence + EXCLUDED.last_sequence
                RETURNING last_sequence
            )
            INSERT INTO events (\(unescaped: eventColumns))
            SELECT e.id, \(batch.projectID), counter.last_sequence - \(count) + e.n, e.type, \(batch.now),
                \(batch.origin.actor.kind.rawValue), \(batch.origin.actor.id), \(batch.origin.clientAddress),
                NULLIF(e.profile_id, ''), e.data
            FROM counter,
                unnest(\(ids)::text[], \(types)::text[], \(profiles)::text[], \(data)::text[])
                    WITH ORDINALITY AS e(id, type, profile_id, data, n)
            """, logger: logger)
    }

    /// Runs `update` (an `UPDATE sessions … AND revoked_at IS NULL RETURNING id, profile_id`), then
    /// `delete` (a `DELETE FROM devices … RETURNING id, profile_id, session_id`: a statement of its
    /// own, so its snapshot includes a device whose registration held a session's row lock while the
    /// UPDATE waited), and adds their events to `batch`; returns how many sessions ended. The SQLite
    /// store runs the same two steps (``SQLiteStore/endSessions(where:_:reason:now:devicesWhere:_:batch:in:)``).
    @discardableResult
    static func endSessions(
        _ update: PostgresQuery, reason: SessionEndReason, devices delete: PostgresQuery, batch: inout EventBatch,
        in connection: PostgresConnection, logger: Logger
    ) async throws -> Int {
        let sessions = try await connection.rows(update, logger: logger).map {
            (id: try $0.text(0), profileID: try $0.text(1))
        }
        let devices = try await connection.rows(delete, logger: logger).map {
            (id: try $0.text(0), profileID: try $0.text(1), sessionID: try $0.text(2))
        }
        batch.ended(sessions: sessions, devices: devices, reason: reason)
        return sessions.count
    }

    /// Removes the personal data of the erased profile (and its aliases) from their earlier events.
    static func scrubEvents(
        projectID: String, profileIDs: [String], in connection: PostgresConnection, logger: Logger
    ) async throws {
        let rows = try await connection.rows(
            """
            SELECT sequence, data FROM events WHERE project_id = \(projectID) AND profile_id = ANY(\(profileIDs))
            FOR UPDATE
            """, logger: logger)
        for row in rows {
            guard let scrubbed = EventRules.scrubbed(try row.text(1)) else { continue }
            let sequence = try row.int(0)
            try await connection.rows(
                "UPDATE events SET data = \(scrubbed) WHERE project_id = \(projectID) AND sequence = \(sequence)",
                logger: logger)
        }
    }

    static func event(_ row: PostgresCells) throws -> EventRecord {
        EventRecord(
            id: try row.text(0), projectID: try row.text(1), sequence: try row.int(2), type: try row.text(3),
            createdAt: try row.int(4),
            actor: EventActor(kind: EventActor.Kind(rawValue: try row.text(5)) ?? .system, id: try row.optionalText(6)),
            clientAddress: try row.optionalText(7), profileID: try row.optionalText(8), data: try row.text(9))
    }

    public func events(_ query: EventQuery) async throws -> [EventRecord] {
        let logger = logger
        let limit = Int64(query.limit)
        let columns = Self.eventColumns
        let (projectID, after, types) = (query.projectID, query.after, query.types)
        // Only the filters asked for, so the planner sees plain conditions (and the profile's index).
        let select: PostgresQuery
        switch (types.isEmpty, query.profileID) {
        case (true, nil):
            select = """
                SELECT \(unescaped: columns) FROM events WHERE project_id = \(projectID) AND sequence > \(after)
                ORDER BY sequence LIMIT \(limit)
                """
        case (false, nil):
            select = """
                SELECT \(unescaped: columns) FROM events WHERE project_id = \(projectID) AND sequence > \(after)
                    AND type = ANY(\(types))
                ORDER BY sequence LIMIT \(limit)
                """
        case (true, let profileID?):
            select = """
                SELECT \(unescaped: columns) FROM events WHERE project_id = \(projectID) AND sequence > \(after)
                    AND profile_id = \(profileID)
                ORDER BY sequence LIMIT \(limit)
                """
        case (false, let profileID?):
            select = """
                SELECT \(unescaped: columns) FROM events WHERE project_id = \(projectID) AND sequence > \(after)
                    AND type = ANY(\(types)) AND profile_id = \(profileID)
                ORDER BY sequence LIMIT \(limit)
                """
        }
        return try await statement { client in try await client.rows(select, logger: logger).map(Self.event) }
    }

    public func deleteEvents(createdBefore: Int64, batchSize: Int) async throws -> Int {
        let logger = logger
        let limit = Int64(batchSize)
        return try await statement { client in
            try await client.rows(
                """
                DELETE FROM events WHERE (project_id, sequence) IN (
                    SELECT project_id, sequence FROM events WHERE created_at < \(createdBefore)
                    ORDER BY created_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
                )
                RETURNING 1
                """, logger: logger
            ).count
        }
    }
}
