/// Webhook deliveries: the fan-out from the feed, the leased queue and the delivery log.
extension SQLiteStore {
    static let deliveryColumns = """
        webhook_id, event_id, event_type, sequence, state, attempt, status_code, error, duration_ms, attempted_at,
        next_attempt_at, queued_at
        """

    static func delivery(_ row: SQLiteRow) -> WebhookDeliveryRecord {
        WebhookDeliveryRecord(
            webhookID: row.text(0), eventID: row.text(1), eventType: row.text(2), sequence: row.optionalInt(3),
            state: WebhookDeliveryRecord.State(rawValue: row.text(4)) ?? .pending, attempt: Int(row.int(5)),
            statusCode: row.optionalInt(6).map { Int($0) }, error: row.optionalText(7),
            durationMilliseconds: row.optionalInt(8), attemptedAt: row.optionalInt(9),
            nextAttemptAt: row.optionalInt(10), queuedAt: row.int(11))
    }

    /// The SQL of the project's last sequence (0 before its first event).
    static let lastSequence = "COALESCE((SELECT last_sequence FROM event_counters WHERE project_id = ?), 0)"

    public func fanOutWebhookDeliveries(now: Int64, batchSize: Int) async throws -> Int {
        // A read first, so a server without webhooks (or with nothing new) never takes the writer.
        let behind = try readers.read {
            try $0.queryFirst(
                """
                SELECT 1 FROM webhooks w JOIN event_counters c ON c.project_id = w.project_id
                WHERE w.enabled = 1 AND w.cursor_sequence < c.last_sequence LIMIT 1
                """)
        }
        guard behind != nil else { return 0 }
        return try await writer.write { connection in
            let webhooks = try connection.query(
                """
                SELECT w.id, w.project_id, w.types, w.cursor_sequence, c.last_sequence
                FROM webhooks w JOIN event_counters c ON c.project_id = w.project_id
                WHERE w.enabled = 1 AND w.cursor_sequence < c.last_sequence LIMIT 10
                """)
            var read = 0
            for webhook in webhooks {
                let (id, projectID) = (webhook.text(0), webhook.text(1))
                let types = WebhookRecord.types(stored: webhook.optionalText(2))
                let events = try connection.query(
                    """
                    SELECT id, sequence, type, created_at FROM events
                    WHERE project_id = ? AND sequence > ? ORDER BY sequence LIMIT ?
                    """, [.init(projectID), .init(webhook.int(3)), .init(batchSize)])
                for event in events where types.isEmpty || types.contains(event.text(2)) {
                    try Self.queue(
                        webhookID: id, projectID: projectID, eventID: event.text(0), sequence: event.int(1),
                        type: event.text(2), createdAt: event.int(3), body: nil, now: now, in: connection)
                }
                read += events.count
                // Events already deleted by retention leave nothing to read: move past them.
                let cursor = events.last?.int(1) ?? webhook.int(4)
                try connection.run(
                    "UPDATE webhooks SET cursor_sequence = ? WHERE id = ?", [.init(cursor), .init(id)])
            }
            return read
        }
    }

    /// Queues (or queues again) one event for one endpoint, due at `now`.
    static func queue(
        webhookID: String, projectID: String, eventID: String, sequence: Int64?, type: String, createdAt: Int64,
        body: String?, now: Int64, in connection: SQLiteConnection
    ) throws {
        try connection.run(
            """
            INSERT INTO webhook_deliveries (webhook_id, event_id, project_id, sequence, event_type, event_created_at,
                body, state, attempt, next_attempt_at, queued_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)
            ON CONFLICT (webhook_id, event_id) DO UPDATE SET state = 'pending', attempt = 0,
                next_attempt_at = excluded.next_attempt_at, queued_at = excluded.queued_at
            """,
            [
                .init(webhookID), .init(eventID), .init(projectID), .init(sequence), .init(type), .init(createdAt),
                .init(body), .init(now), .init(now),
            ])
    }

    /// Takes a disabled endpoint's pending deliveries out of the due index (no due time), so that
    /// claims never scan them, or makes them due at `now` when it is enabled again.
    static func park(webhookID: String, enabled: Bool, now: Int64, in connection: SQLiteConnection) throws {
        if enabled {
            try connection.run(
                """
                UPDATE webhook_deliveries SET next_attempt_at = ?
                WHERE webhook_id = ? AND state = 'pending' AND next_attempt_at IS NULL
                """, [.init(now), .init(webhookID)])
        } else {
            try connection.run(
                "UPDATE webhook_deliveries SET next_attempt_at = NULL WHERE webhook_id = ? AND state = 'pending'",
                [.init(webhookID)])
        }
    }

    public func claimWebhookDeliveries(lease: String, now: Int64, leaseSeconds: Int64, limit: Int) async throws
        -> [ClaimedWebhookDelivery]
    {
        let due = try readers.read {
            try $0.queryFirst(
                """
                SELECT 1 FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= ?
                    AND (lease_expires_at IS NULL OR lease_expires_at <= ?) LIMIT 1
                """, [.init(now), .init(now)])
        }
        guard due != nil else { return [] }
        return try await writer.write { connection in
            // One statement in the single writer: no other node or task can claim the same rows.
            let claimed = try connection.query(
                """
                UPDATE webhook_deliveries SET lease_owner = ?, lease_expires_at = ?
                WHERE rowid IN (
                    SELECT d.rowid FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
                    WHERE d.state = 'pending' AND d.next_attempt_at <= ?
                        AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= ?) AND w.enabled = 1
                    ORDER BY d.next_attempt_at LIMIT ?)
                RETURNING webhook_id, project_id, event_id, attempt, sequence, body, event_created_at
                """, [.init(lease), .init(now + leaseSeconds), .init(now), .init(now), .init(limit)])
            return try claimed.map { row in
                let (projectID, sequence) = (row.text(1), row.optionalInt(4))
                let found = try sequence.flatMap {
                    try connection.queryFirst(
                        "SELECT \(Self.eventColumns), trace_context FROM events WHERE project_id = ? AND sequence = ?",
                        [.init(projectID), .init($0)]
                    ).map { (event: Self.event($0), traceContext: $0.optionalText(11)) }
                }
                return ClaimedWebhookDelivery(
                    webhookID: row.text(0), projectID: projectID, eventID: row.text(2), attempt: Int(row.int(3)),
                    lease: lease, event: found?.event, body: row.optionalText(5), eventCreatedAt: row.int(6),
                    traceContext: found?.traceContext)
            }
        }
    }

    public func recordWebhookAttempts(_ results: [WebhookAttemptResult]) async throws -> [Bool] {
        guard !results.isEmpty else { return [] }
        return try await writer.write { connection in try results.map { try Self.record($0, in: connection) } }
    }

    static func record(_ result: WebhookAttemptResult, in connection: SQLiteConnection) throws -> Bool {
        let changed = try connection.run(
            """
            UPDATE webhook_deliveries SET state = ?, attempt = ?, attempted_at = ?, status_code = ?, error = ?,
                duration_ms = ?, next_attempt_at = ?, lease_owner = NULL, lease_expires_at = NULL
            WHERE webhook_id = ? AND event_id = ? AND lease_owner = ?
            """,
            [
                .init(result.state.rawValue), .init(result.attempt), .init(result.at),
                .init(result.statusCode.map { Int64($0) }), .init(result.error),
                .init(result.durationMilliseconds), .init(result.nextAttemptAt), .init(result.webhookID),
                .init(result.eventID), .init(result.lease),
            ])
        guard changed == 1 else { return false }
        try connection.run(
            """
            INSERT INTO webhook_attempts (id, webhook_id, event_id, attempt, at, status_code, error, duration_ms,
                request_body, response_body)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .init(Self.attemptID(result)), .init(result.webhookID), .init(result.eventID), .init(result.attempt),
                .init(result.at), .init(result.statusCode.map { Int64($0) }), .init(result.error),
                .init(result.durationMilliseconds), .init(result.requestBody),
                result.responseBody.map { .blob($0) } ?? .null,
            ])
        if result.state == .delivered {
            try connection.run(
                "UPDATE webhooks SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL",
                [.init(result.webhookID)])
            return true
        }
        try connection.run(
            "UPDATE webhooks SET failing_since = COALESCE(failing_since, ?) WHERE id = ?",
            [.init(result.at), .init(result.webhookID)])
        let failing =
            try connection.queryFirst(
                "SELECT 1 FROM webhooks WHERE id = ? AND failing_since <= ?",
                [.init(result.webhookID), .init(result.failingDisableBefore)]) != nil
        let reason = result.disableReason ?? (failing ? "failing" : nil)
        if let reason,
            let disabled = try connection.queryFirst(
                """
                UPDATE webhooks SET enabled = 0, disabled_at = ?, disabled_reason = ?, updated_at = ?
                WHERE id = ? AND enabled = 1 RETURNING project_id
                """, [.init(result.at), .init(reason), .init(result.at), .init(result.webhookID)])
        {
            try Self.park(webhookID: result.webhookID, enabled: false, now: result.at, in: connection)
            var batch = EventBatch(projectID: disabled.text(0), origin: .webhooks, now: result.at)
            batch.append(.webhookUpdated(webhookID: result.webhookID, changed: ["enabled"]))
            try Self.append(batch, in: connection)
        }
        return true
    }

    public func webhookDeliveries(
        projectID: String, webhookID: String, state: WebhookDeliveryRecord.State?,
        before cursor: WebhookDeliveryCursor?, limit: Int
    ) async throws -> [WebhookDeliveryRecord] {
        var sql = "SELECT \(Self.deliveryColumns) FROM webhook_deliveries WHERE webhook_id = ? AND project_id = ?"
        var bindings: [SQLiteValue] = [.init(webhookID), .init(projectID)]
        if let state {
            sql += " AND state = ?"
            bindings.append(.init(state.rawValue))
        }
        if let cursor {
            sql += " AND (queued_at < ? OR (queued_at = ? AND event_id < ?))"
            bindings += [.init(cursor.queuedAt), .init(cursor.queuedAt), .init(cursor.eventID)]
        }
        sql += " ORDER BY queued_at DESC, event_id DESC LIMIT ?"
        bindings.append(.init(limit))
        return try readers.read { [sql, bindings] in try $0.query(sql, bindings).map(Self.delivery) }
    }

    public func replayWebhookEvent(projectID: String, webhookID: String, eventID: String, now: Int64) async throws
        -> Bool?
    {
        // The dispatcher waits for this (a spurious wake when the write failed costs one pass).
        defer { eventSignal.raise() }
        return try await writer.write { connection -> Bool? in
            guard
                try connection.queryFirst(
                    "SELECT 1 FROM webhooks WHERE project_id = ? AND id = ?", [.init(projectID), .init(webhookID)])
                    != nil
            else { return nil }
            guard
                let event = try connection.queryFirst(
                    "SELECT sequence, type, created_at FROM events WHERE project_id = ? AND id = ?",
                    [.init(projectID), .init(eventID)])
            else { return false }
            try Self.queue(
                webhookID: webhookID, projectID: projectID, eventID: eventID, sequence: event.int(0),
                type: event.text(1), createdAt: event.int(2), body: nil, now: now, in: connection)
            return true
        }
    }

    public func replayWebhookEvents(projectID: String, webhookID: String, afterSequence: Int64, now: Int64)
        async throws -> Int?
    {
        // The dispatcher waits for this (a spurious wake when the write failed costs one pass).
        defer { eventSignal.raise() }
        return try await writer.write { connection -> Int? in
            guard
                let webhook = try connection.queryFirst(
                    "SELECT types, cursor_sequence FROM webhooks WHERE project_id = ? AND id = ?",
                    [.init(projectID), .init(webhookID)])
            else { return nil }
            // Events after the cursor are queued by the fan-out; these are the ones it already passed.
            let types = WebhookRecord.types(stored: webhook.optionalText(0))
            var sql = """
                INSERT INTO webhook_deliveries (webhook_id, event_id, project_id, sequence, event_type,
                    event_created_at, body, state, attempt, next_attempt_at, queued_at)
                SELECT ?, id, project_id, sequence, type, created_at, NULL, 'pending', 0, ?, ?
                FROM events WHERE project_id = ? AND sequence > ? AND sequence <= ?
                """
            var bindings: [SQLiteValue] = [
                .init(webhookID), .init(now), .init(now), .init(projectID), .init(afterSequence), .init(webhook.int(1)),
            ]
            if !types.isEmpty {
                sql += " AND type IN (\(Array(repeating: "?", count: types.count).joined(separator: ", ")))"
                bindings += types.map { .init($0) }
            }
            sql += """

                ON CONFLICT (webhook_id, event_id) DO UPDATE SET state = 'pending', attempt = 0,
                    next_attempt_at = excluded.next_attempt_at, queued_at = excluded.queued_at
                """
            return try connection.run(sql, bindings)
        }
    }

    public func queueWebhookTest(projectID: String, webhookID: String, event: EventRecord, body: String, now: Int64)
        async throws -> Bool
    {
        // The dispatcher waits for this (a spurious wake when the write failed costs one pass).
        defer { eventSignal.raise() }
        return try await writer.write { connection in
            guard
                try connection.queryFirst(
                    "SELECT 1 FROM webhooks WHERE project_id = ? AND id = ?", [.init(projectID), .init(webhookID)])
                    != nil
            else { return false }
            try Self.queue(
                webhookID: webhookID, projectID: projectID, eventID: event.id, sequence: nil, type: event.type,
                createdAt: event.createdAt, body: body, now: now, in: connection)
            return true
        }
    }

    public func oldestPendingWebhookDeliveries() async throws -> [(webhookID: String, eventCreatedAt: Int64)] {
        try readers.read {
            try $0.query(
                """
                SELECT webhook_id, MIN(event_created_at) FROM webhook_deliveries WHERE state = 'pending'
                GROUP BY webhook_id
                """
            ).map { (webhookID: $0.text(0), eventCreatedAt: $0.int(1)) }
        }
    }

    public func deleteFinishedWebhookDeliveries(attemptedBefore: Int64, batchSize: Int) async throws -> Int {
        try await writer.write { connection in
            // The attempt log is kept as long as the deliveries are.
            try connection.run(
                """
                DELETE FROM webhook_attempts WHERE rowid IN (
                    SELECT rowid FROM webhook_attempts WHERE at < ? ORDER BY at LIMIT ?)
                """, [.init(attemptedBefore), .init(batchSize)])
            return try connection.run(
                """
                DELETE FROM webhook_deliveries WHERE rowid IN (
                    SELECT rowid FROM webhook_deliveries WHERE state <> 'pending' AND attempted_at < ? LIMIT ?)
                """, [.init(attemptedBefore), .init(batchSize)])
        }
    }
}
