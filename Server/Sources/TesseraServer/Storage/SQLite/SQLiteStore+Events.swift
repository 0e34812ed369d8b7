/// The outbox: events written in the transaction of their change, and the feed that reads them.
extension SQLiteStore {
    static let eventColumns =
        "id, project_id, sequence, type, created_at, actor_type, actor_id, client_address, profile_id, data"

    /// Writes `batch`'s events with the project's next sequences; called last in a write transaction.
    ///
    /// SQLite has one writer, so the counter row is never contended; the same counter table as on
    /// PostgreSQL keeps both backends alike.
    static func append(_ batch: EventBatch, in connection: SQLiteConnection) throws {
        guard !batch.drafts.isEmpty else { return }
        connection.appendedEvents += batch.drafts.map(\.type)
        let count = Int64(batch.drafts.count)
        try connection.run(
            """
            INSERT INTO event_counters (project_id, last_sequence) VALUES (?, ?)
            ON CONFLICT (project_id) DO UPDATE SET last_sequence = last_sequence + excluded.last_sequence
            """,
            [.init(batch.projectID), .init(count)])
        let last =
            try connection.queryFirst(
                "SELECT last_sequence FROM event_counters WHERE project_id = ?", [.init(batch.projectID)])?.int(0)
            ?? count
        for (offset, draft) in batch.drafts.enumerated() {
            try connection.run(
                """
                INSERT INTO events (\(eventColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .init(draft.id), .init(batch.projectID), .init(last - count + 1 + Int64(offset)),
                    .init(draft.type.rawValue), .init(batch.now), .init(batch.origin.actor.kind.rawValue),
                    .init(batch.origin.actor.id), .init(batch.origin.clientAddress), .init(draft.profileID),
                    .init(draft.data),
                ])
        }
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
        }
    }

    static func event(_ row: SQLiteRow) -> EventRecord {
        EventRecord(
            id: row.text(0), projectID: row.text(1), sequence: row.int(2), type: row.text(3), createdAt: row.int(4),
            actor: EventActor(kind: EventActor.Kind(rawValue: row.text(5)) ?? .system, id: row.optionalText(6)),
            clientAddress: row.optionalText(7), profileID: row.optionalText(8), data: row.text(9))
    }

    public func events(_ query: EventQuery) async throws -> [EventRecord] {
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
        return try readers.read { [sql, bindings] in try $0.query(sql, bindings).map(Self.event) }
    }

    public func deleteEvents(createdBefore: Int64, batchSize: Int) async throws -> Int {
        try await writer.write { connection in
            try connection.run(
                """
                DELETE FROM events WHERE rowid IN
                    (SELECT rowid FROM events WHERE created_at < ? ORDER BY created_at LIMIT ?)
                """,
                [.init(createdBefore), .init(batchSize)])
        }
    }
}
