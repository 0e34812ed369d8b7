import PostgresNIO

/// The outbox: events written in the transaction of their change, and the feed that reads them.
extension PostgresStore {

    /// Writes `batch`'s events to the outbox, in one statement and without a sequence; the
    /// sequencer (``sequenceEvents(projectID:)``) numbers them once the transaction committed.
    ///
    /// Why not number them here: a sequence taken inside the transaction is either unordered with
    /// respect to commits or serialises them. A `BIGSERIAL` (or any sequence object) is handed out
    /// without a lock, so transaction A can take 5, B take 6 and commit first; a reader polling
    /// `after=4` sees 6, moves on, and skips 5 when A commits a moment later (and a rolled-back
    /// transaction leaves a gap). A counter row taken with a lock gives the right order, but every
    /// transaction of the project then waits for the one before it to commit (its `fsync`
    /// included): on PostgreSQL that halved anonymous starts and identifies under load. The outbox
    /// costs the change one lock-free insert; the sequencer, one at a time per project (the counter
    /// row's lock), moves only committed events, so sequences become visible in order and
    /// without gaps.
    static func append(_ batch: EventBatch, in connection: PostgresConnection, logger: Logger) async throws {
        guard !batch.drafts.isEmpty else { return }
        EventCollector.current?.add(batch)
        _ = try await connection.rows(
            PostgresPreparedQueries.AppendEvents(batch: batch, traceContext: TraceScope.traceContext), logger: logger)
    }

    /// The most events one sequencer transaction moves.
    static let sequencerBatch: Int64 = 1_000

    /// Moves the committed events of the outbox into the feed, numbered with their project's next
    /// sequences; only `projectID`'s when given. Returns how many it moved.
    ///
    /// One transaction per project and batch: the counter row is locked first (a second sequencer,
    /// on this node or another, waits here until the first committed), then a new statement, whose
    /// snapshot includes everything committed so far, moves the oldest outbox rows of the project.
    /// An event whose transaction commits later is moved by a later run, with later sequences.
    @discardableResult
    public func sequenceEvents(projectID: String? = nil) async throws -> Int {
        let logger = logger
        let projects: [String]
        if let projectID {
            projects = [projectID]
        } else {
            projects = try await statement { client in
                try await client.rows("SELECT DISTINCT project_id FROM event_outbox", logger: logger).map {
                    try $0.text(0)
                }
            }
        }
        var moved = 0
        for project in projects {
            while true {
                let count = try await transaction { connection in
                    let last =
                        try await connection.first(
                            """
                            INSERT INTO event_counters AS c (project_id, last_sequence) VALUES (\(project), 0)
                            ON CONFLICT (project_id) DO UPDATE SET last_sequence = c.last_sequence
                            RETURNING last_sequence
                            """, logger: logger)?.int(0) ?? 0
                    let count =
                        try await connection.first(
                            """
                            WITH moved AS (
                                DELETE FROM event_outbox WHERE position IN (
                                    SELECT position FROM event_outbox WHERE project_id = \(project)
                                    ORDER BY position LIMIT \(Self.sequencerBatch)
                                )
                                RETURNING *
                            ), numbered AS (
                                SELECT moved.*, row_number() OVER (ORDER BY position) AS n FROM moved
                            ), inserted AS (
                                INSERT INTO events (\(unescaped: Self.eventColumns), trace_context)
                                SELECT id, project_id, \(last) + n, type, created_at, actor_type, actor_id,
                                    client_address, profile_id, data, reason, trace_context
                                FROM numbered
                                RETURNING 1
                            )
                            UPDATE event_counters SET last_sequence = last_sequence + (SELECT count(*) FROM inserted)
                            WHERE project_id = \(project)
                            RETURNING last_sequence - \(last)
                            """, logger: logger)?.int(0) ?? 0
                    return Int(count)
                }
                moved += count
                if count < Self.sequencerBatch { break }
            }
        }
        return moved
    }

    /// Runs `update` (an `UPDATE sessions … AND revoked_at IS NULL RETURNING id, profile_id`), then
    /// `delete` (a `DELETE FROM devices … RETURNING id, profile_id, session_id`; by default, the
    /// devices of the sessions `update` ended), a statement of its own, so its snapshot includes a
    /// device whose registration held a session's row lock while the UPDATE waited, and adds their
    /// events to `batch`; returns how many sessions ended. The SQLite store runs the same two steps
    /// (``SQLiteStore/endSessions(where:_:reason:now:devicesWhere:_:batch:in:)``).
    @discardableResult
    static func endSessions(
        _ update: PostgresQuery, reason: SessionEndReason, devices delete: PostgresQuery? = nil,
        batch: inout EventBatch, in connection: PostgresConnection, logger: Logger
    ) async throws -> Int {
        let sessions = try await connection.rows(update, logger: logger).map {
            (id: try $0.text(0), profileID: try $0.text(1))
        }
        let devices: [(id: String, profileID: String, sessionID: String)]
        if let delete {
            devices = try await deleteDevices(delete, in: connection, logger: logger)
        } else if sessions.isEmpty {
            devices = []
        } else {
            devices = try await deleteDevices(ofSessions: sessions.map(\.id), in: connection, logger: logger)
        }
        batch.ended(sessions: sessions, devices: devices, reason: reason)
        return sessions.count
    }

    /// Deletes the devices of the sessions `sessionIDs`, answering what it deleted for their events.
    static func deleteDevices(ofSessions sessionIDs: [String], in connection: PostgresConnection, logger: Logger)
        async throws -> [(id: String, profileID: String, sessionID: String)]
    {
        try await deleteDevices(
            "DELETE FROM devices WHERE session_id = ANY(\(sessionIDs)) RETURNING id, profile_id, session_id",
            in: connection, logger: logger)
    }

    /// Runs `delete` (a `DELETE FROM devices … RETURNING id, profile_id, session_id`), answering what
    /// it deleted for their events.
    static func deleteDevices(_ delete: PostgresQuery, in connection: PostgresConnection, logger: Logger)
        async throws -> [(id: String, profileID: String, sessionID: String)]
    {
        try await connection.rows(delete, logger: logger).map {
            (id: try $0.text(0), profileID: try $0.text(1), sessionID: try $0.text(2))
        }
    }

    /// Removes the personal data of the erased profile (and its aliases) from their earlier events,
    /// numbered or still in the outbox.
    ///
    /// The outbox first: its rows are locked there, so a sequencer that is moving them finishes
    /// before the next statement, whose snapshot then finds them in `events`, and one that has not
    /// started yet moves them scrubbed.
    static func scrubEvents(
        projectID: String, profileIDs: [String], in connection: PostgresConnection, logger: Logger
    ) async throws {
        for (table, key) in [("event_outbox", "position"), ("events", "sequence")] {
            let rows = try await connection.rows(
                """
                SELECT \(unescaped: key), data FROM \(unescaped: table)
                WHERE project_id = \(projectID) AND profile_id = ANY(\(profileIDs))
                FOR UPDATE
                """, logger: logger)
            for row in rows {
                guard let scrubbed = EventRules.scrubbed(try row.text(1)) else { continue }
                let position = try row.int(0)
                try await connection.rows(
                    """
                    UPDATE \(unescaped: table) SET data = \(scrubbed)
                    WHERE project_id = \(projectID) AND \(unescaped: key) = \(position)
                    """, logger: logger)
            }
        }
        // The webhook attempts kept for debugging hold copies of these events (and what the receiver
        // answered): their bodies go, their status and timing stay.
        try await connection.rows(
            """
            UPDATE webhook_attempts SET request_body = NULL, response_body = NULL
            WHERE event_id IN (SELECT id FROM events WHERE project_id = \(projectID) AND profile_id = ANY(\(profileIDs)))
                AND (request_body IS NOT NULL OR response_body IS NOT NULL)
            """, logger: logger)
    }

    static func event(_ row: PostgresCells) throws -> EventRecord {
        EventRecord(
            id: try row.text(0), projectID: try row.text(1), sequence: try row.int(2), type: try row.text(3),
            createdAt: try row.int(4),
            actor: EventActor(kind: EventActor.Kind(rawValue: try row.text(5)) ?? .system, id: try row.optionalText(6)),
            clientAddress: try row.optionalText(7), profileID: try row.optionalText(8), data: try row.text(9),
            reason: try row.optionalText(10))
    }

    public func events(_ query: EventQuery) async throws -> [EventRecord] {
        // What committed before this read is in the feed: a client that changed something and then
        // reads finds its event, whether or not this node's sequencer has run since.
        try await sequenceEvents(projectID: query.projectID)
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

    public func auditEvents(projectID: String, filter: AuditFilter, before: Int64?, limit: Int) async throws
        -> [EventRecord]
    {
        try await sequenceEvents(projectID: projectID)
        let logger = logger
        let query = Self.auditEventsStatement(projectID: projectID, filter: filter, before: before, limit: limit)
        return try await statement { client in try await client.rows(query, logger: logger).map(Self.event) }
    }

    /// The statement of ``auditEvents(projectID:filter:before:limit:)`` (its plan is tested). A
    /// filter left out is a parameter that is NULL (typed, so the server knows what it compares).
    static func auditEventsStatement(projectID: String, filter: AuditFilter, before: Int64?, limit: Int)
        -> PostgresQuery
    {
        let (before, limit) = (before ?? Int64.max, Int64(limit))
        let actor = filter.actorColumns
        let (type, profileID, from, until) = (filter.type, filter.profileID, filter.from, filter.until)
        return """
            SELECT \(unescaped: Self.eventColumns) FROM events
            WHERE project_id = \(projectID) AND actor_type IN ('secret_key', 'operator') AND sequence < \(before)
              AND (\(type)::text IS NULL OR type = \(type)::text)
              AND (\(actor.type)::text IS NULL OR actor_type = \(actor.type)::text)
              AND (\(actor.id)::text IS NULL OR actor_id = \(actor.id)::text)
              AND (\(profileID)::text IS NULL OR profile_id = \(profileID)::text)
              AND (\(from)::bigint IS NULL OR created_at >= \(from)::bigint)
              AND (\(until)::bigint IS NULL OR created_at < \(until)::bigint)
            ORDER BY sequence DESC LIMIT \(limit)
            """
    }

    /// Deletes up to `batchSize` events older than `createdBefore` from the head of each project's
    /// sequence (their oldest end: sequences become visible in commit order, so no index on
    /// `created_at` is needed, and an insert pays for one index fewer).
    public func deleteEvents(createdBefore: Int64, batchSize: Int) async throws -> Int {
        let logger = logger
        let limit = Int64(batchSize)
        return try await statement { client in
            try await client.rows(
                """
                DELETE FROM events WHERE (project_id, sequence) IN (
                    SELECT head.project_id, head.sequence FROM event_counters AS c
                    CROSS JOIN LATERAL (
                        SELECT project_id, sequence, created_at FROM events
                        WHERE project_id = c.project_id ORDER BY sequence LIMIT \(limit)
                    ) AS head
                    WHERE head.created_at < \(createdBefore)
                    LIMIT \(limit)
                )
                RETURNING 1
                """, logger: logger
            ).count
        }
    }
}
