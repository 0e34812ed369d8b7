/// The outbox: events written in the transaction of their change, and the feed that reads them.
extension SQLiteStore {

    /// Writes `batch`'s events with the project's next sequences; called last in a write transaction.
    ///
    /// SQLite has one writer, so the counter row is never contended; the same counter table as on
    /// PostgreSQL keeps both backends alike. Two statements, whatever the number of events: the
    /// counter's upsert returns the last sequence, and one `INSERT` writes every row.
    static func append(_ batch: EventBatch, in connection: SQLiteConnection) throws {
        let drafts = batch.drafts
        guard !drafts.isEmpty else { return }
        for draft in drafts { connection.appendedEvents.append(draft.type) }
        let count = Int64(drafts.count)
        guard
            let last = try connection.queryFirst(
                """
                INSERT INTO event_counters (project_id, last_sequence) VALUES (?, ?)
                ON CONFLICT (project_id) DO UPDATE SET last_sequence = last_sequence + excluded.last_sequence
                RETURNING last_sequence
                """,
                [.init(batch.projectID), .init(count)])?.int(0)
        else { throw SQLiteError(code: 1, message: "the event counter returned no row") }
        var bindings: [SQLiteValue] = []
        bindings.reserveCapacity(drafts.count * 12)
        let first = last - count + 1
        for (offset, draft) in drafts.enumerated() {
            bindings += [
                .init(draft.id), .init(batch.projectID), .init(first + Int64(offset)), .init(draft.type.rawValue),
                .init(batch.now), .init(batch.origin.actor.kind.rawValue), .init(batch.origin.actor.id),
                .init(batch.origin.clientAddress), .init(draft.profileID), .init(draft.data),
                .init(batch.origin.reason), .init(connection.traceContext),
            ]
        }
        try connection.run(insertEvents(drafts.count), bindings)
    }

    /// `INSERT INTO events … VALUES (…), (…)` for `count` rows; the usual counts are built once.
    private static func insertEvents(_ count: Int) -> String {
        count < insertStatements.count ? insertStatements[count] : insertStatement(count)
    }

    private static let insertStatements = (0..<9).map(insertStatement)

    private static func insertStatement(_ count: Int) -> String {
        let row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        return "INSERT INTO events (\(eventColumns), trace_context) VALUES "
            + Array(repeating: row, count: count).joined(separator: ", ")
    }

    /// Ends the sessions matching `condition` that are not revoked yet (revoked at `now`), deletes
    /// the devices matching `devicesWhere`, and adds their events to `batch`; returns how many ended.
    ///
    /// The PostgreSQL store runs the same two statements (with `RETURNING`), so both write the same events.
    @discardableResult
    static func endSessions(
        where condition: String, _ bindings: [SQLiteValue], reason: SessionEndReason, now: Int64,
        devicesWhere: String, _ deviceBindings: [SQLiteValue], batch: inout EventBatch,
        in connection: SQLiteConnection
    ) throws -> Int {
        let sessions = try connection.query(
            "SELECT id, profile_id FROM sessions WHERE (\(condition)) AND revoked_at IS NULL", bindings
        ).map { (id: $0.text(0), profileID: $0.text(1)) }
        for session in sessions {
            try connection.run("UPDATE sessions SET revoked_at = ? WHERE id = ?", [.init(now), .init(session.id)])
        }
        let devices = try deleteDevices(where: devicesWhere, deviceBindings, in: connection)
        batch.ended(sessions: sessions, devices: devices, reason: reason)
        return sessions.count
    }

    /// Deletes the devices matching `condition` and returns them.
    static func deleteDevices(where condition: String, _ bindings: [SQLiteValue], in connection: SQLiteConnection)
        throws -> [(id: String, profileID: String, sessionID: String)]
    {
        let devices = try connection.query(
            "SELECT id, profile_id, session_id FROM devices WHERE \(condition)", bindings
        )
        .map { (id: $0.text(0), profileID: $0.text(1), sessionID: $0.text(2)) }
        try connection.run("DELETE FROM devices WHERE \(condition)", bindings)
        return devices
    }

    /// Removes the personal data of the erased profile (and its aliases) from their earlier events.
    static func scrubEvents(projectID: String, profileIDs: [String], in connection: SQLiteConnection) throws {
        for profileID in profileIDs {
            let rows = try connection.query(
                "SELECT sequence, data FROM events WHERE project_id = ? AND profile_id = ?",
                [.init(projectID), .init(profileID)])
            for row in rows {
                guard let scrubbed = EventRules.scrubbed(row.text(1)) else { continue }
                try connection.run(
                    "UPDATE events SET data = ? WHERE project_id = ? AND sequence = ?",
                    [.init(scrubbed), .init(projectID), .init(row.int(0))])
            }
            // The webhook attempts kept for debugging hold copies of these events (and what the
            // receiver answered): their bodies go, their status and timing stay.
            try connection.run(
                """
                UPDATE webhook_attempts SET request_body = NULL, response_body = NULL
                WHERE event_id IN (SELECT id FROM events WHERE project_id = ? AND profile_id = ?)
                    AND (request_body IS NOT NULL OR response_body IS NOT NULL)
                """,
                [.init(projectID), .init(profileID)])
        }
    }

    static func event(_ row: SQLiteRow) -> EventRecord {
        EventRecord(
            id: row.text(0), projectID: row.text(1), sequence: row.int(2), type: row.text(3), createdAt: row.int(4),
            actor: EventActor(kind: EventActor.Kind(rawValue: row.text(5)) ?? .system, id: row.optionalText(6)),
            clientAddress: row.optionalText(7), profileID: row.optionalText(8), data: row.text(9),
            reason: row.optionalText(10))
    }

    public func events(_ query: EventQuery) async throws -> [EventRecord] {
        let (sql, bindings) = Self.eventsStatement(query)
        return try readers.read { try $0.query(sql, bindings).map(Self.event) }
    }

    /// The statement of a read of the feed (the query-plan test reads it too).
    static func eventsStatement(_ query: EventQuery) -> (sql: String, bindings: [SQLiteValue]) {
        var sql = "SELECT \(Self.eventColumns) FROM events WHERE project_id = ? AND sequence > ?"
        var bindings: [SQLiteValue] = [.init(query.projectID), .init(query.after)]
        if !query.types.isEmpty {
            sql += " AND type IN (\(Array(repeating: "?", count: query.types.count).joined(separator: ", ")))"
            bindings += query.types.map { .init($0) }
        }
        if let profileID = query.profileID {
            sql += " AND profile_id = ?"
            bindings.append(.init(profileID))
        }
        sql += " ORDER BY sequence LIMIT ?"
        bindings.append(.init(query.limit))
        return (sql, bindings)
    }

    public func auditEvents(projectID: String, filter: AuditFilter, before: Int64?, limit: Int) async throws
        -> [EventRecord]
    {
        let statement = Self.auditEventsStatement(projectID: projectID, filter: filter, before: before, limit: limit)
        return try readers.read { try $0.query(statement.sql, statement.bindings).map(Self.event) }
    }

    /// The statement of ``auditEvents(projectID:filter:before:limit:)`` (its plan is tested). The
    /// condition on actor_type is the audit indexes' own, so SQLite reads a partial index (named:
    /// else it walks the primary key back through every event), of one profile's audit entries when
    /// it is filtered by profile. A filter left out is a parameter that is NULL.
    static func auditEventsStatement(projectID: String, filter: AuditFilter, before: Int64?, limit: Int) -> Statement {
        let index = filter.profileID == nil ? "events_audit" : "events_audit_profile"
        let profile = filter.profileID == nil ? "?6 IS NULL" : "profile_id = ?6"
        let actor = filter.actorColumns
        return (
            """
            SELECT \(Self.eventColumns) FROM events INDEXED BY \(index)
            WHERE project_id = ?1 AND actor_type IN ('secret_key', 'operator') AND sequence < ?2
              AND (?3 IS NULL OR type = ?3) AND (?4 IS NULL OR actor_type = ?4) AND (?5 IS NULL OR actor_id = ?5)
              AND \(profile) AND (?7 IS NULL OR created_at >= ?7) AND (?8 IS NULL OR created_at < ?8)
            ORDER BY sequence DESC LIMIT ?9
            """,
            [
                .init(projectID), .init(before ?? Int64.max), .init(filter.type), .init(actor.type), .init(actor.id),
                .init(filter.profileID), .init(filter.from), .init(filter.until), .init(limit),
            ]
        )
    }

    /// Deletes up to `batchSize` events older than `createdBefore` from the head of each project's
    /// sequence (their oldest end: sequences are handed out in commit order, so no index on
    /// `created_at` is needed, and an insert pays for one index fewer).
    public func deleteEvents(createdBefore: Int64, batchSize: Int) async throws -> Int {
        try await writer.write { connection in
            var deleted = 0
            for project in try connection.query("SELECT project_id FROM event_counters ORDER BY project_id") {
                guard deleted < batchSize else { break }
                deleted += try connection.run(
                    """
                    DELETE FROM events WHERE project_id = ?1 AND created_at < ?2 AND sequence IN
                        (SELECT sequence FROM events WHERE project_id = ?1 ORDER BY sequence LIMIT ?3)
                    """,
                    [.init(project.text(0)), .init(createdBefore), .init(batchSize - deleted)])
            }
            return deleted
        }
    }
}
