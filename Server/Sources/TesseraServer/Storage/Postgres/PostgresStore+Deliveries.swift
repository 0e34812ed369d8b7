import Foundation
import PostgresNIO

/// Webhook deliveries: the fan-out from the feed, the leased queue and the delivery log.
extension PostgresStore {
    static func delivery(_ row: PostgresCells) throws -> WebhookDeliveryRecord {
        WebhookDeliveryRecord(
            webhookID: try row.text(0), eventID: try row.text(1), eventType: try row.text(2),
            sequence: try row.optionalInt(3),
            state: WebhookDeliveryRecord.State(rawValue: try row.text(4)) ?? .pending, attempt: Int(try row.int(5)),
            statusCode: try row.optionalInt(6).map { Int($0) }, error: try row.optionalText(7),
            durationMilliseconds: try row.optionalInt(8), attemptedAt: try row.optionalInt(9),
            nextAttemptAt: try row.optionalInt(10), queuedAt: try row.int(11))
    }

    /// The event whose feed columns start at column `offset`.
    static func event(_ row: PostgresCells, at offset: Int) throws -> EventRecord {
        EventRecord(
            id: try row.text(offset), projectID: try row.text(offset + 1), sequence: try row.int(offset + 2),
            type: try row.text(offset + 3), createdAt: try row.int(offset + 4),
            actor: EventActor(
                kind: EventActor.Kind(rawValue: try row.text(offset + 5)) ?? .system,
                id: try row.optionalText(offset + 6)),
            clientAddress: try row.optionalText(offset + 7), profileID: try row.optionalText(offset + 8),
            data: try row.text(offset + 9), reason: try row.optionalText(offset + 10))
    }

    /// The upsert of one queued delivery (a replay queues a delivered or failed one again).
    static let queueConflict = """
        ON CONFLICT (webhook_id, event_id) DO UPDATE SET state = 'pending', attempt = 0,
            next_attempt_at = EXCLUDED.next_attempt_at, queued_at = EXCLUDED.queued_at
        """

    public func fanOutWebhookDeliveries(now: Int64, batchSize: Int) async throws -> Int {
        // Number what has committed first: the dispatcher wakes on this node's commits, which may be
        // ahead of the sequencer's next run (and a delivery waits for no poll interval).
        try await sequenceEvents()
        let logger = logger
        let limit = Int64(batchSize)
        // A read first, so a server without webhooks (or with nothing new) opens no transaction.
        let behind = try await statement { client in
            try await client.first(
                """
                SELECT 1 FROM webhooks w JOIN event_counters c ON c.project_id = w.project_id
                WHERE w.enabled AND w.cursor_sequence < c.last_sequence LIMIT 1
                """, logger: logger)
        }
        guard behind != nil else { return 0 }
        return try await transaction { connection in
            // Each endpoint's cursor is advanced by one node at a time: the others skip its locked row.
            // Reading the feed after the cursor never skips an event (see `append`): a transaction
            // still in flight holds the counter, so no later sequence is visible before its events.
            let webhooks = try await connection.rows(
                """
                SELECT w.id, w.project_id, w.types, w.cursor_sequence, c.last_sequence
                FROM webhooks w JOIN event_counters c ON c.project_id = w.project_id
                WHERE w.enabled AND w.cursor_sequence < c.last_sequence
                LIMIT 10 FOR UPDATE OF w SKIP LOCKED
                """, logger: logger)
            var read = 0
            for webhook in webhooks {
                let (id, projectID) = (try webhook.text(0), try webhook.text(1))
                let types = WebhookRecord.types(stored: try webhook.optionalText(2))
                let events = try await connection.rows(
                    """
                    SELECT id, sequence, type, created_at FROM events
                    WHERE project_id = \(projectID) AND sequence > \(try webhook.int(3))
                    ORDER BY sequence LIMIT \(limit)
                    """, logger: logger)
                var ids: [String] = []
                var sequences: [Int64] = []
                var eventTypes: [String] = []
                var created: [Int64] = []
                for event in events {
                    let type = try event.text(2)
                    guard types.isEmpty || types.contains(type) else { continue }
                    ids.append(try event.text(0))
                    sequences.append(try event.int(1))
                    eventTypes.append(type)
                    created.append(try event.int(3))
                }
                if !ids.isEmpty {
                    try await connection.rows(
                        """
                        INSERT INTO webhook_deliveries (webhook_id, event_id, project_id, sequence, event_type,
                            event_created_at, state, attempt, next_attempt_at, queued_at)
                        SELECT \(id), e.id, \(projectID), e.sequence, e.type, e.created_at, 'pending', 0, \(now), \(now)
                        FROM unnest(\(ids)::text[], \(sequences)::bigint[], \(eventTypes)::text[], \(created)::bigint[])
                            AS e(id, sequence, type, created_at)
                        \(unescaped: Self.queueConflict)
                        """, logger: logger)
                }
                read += events.count
                // Events already deleted by retention leave nothing to read: move past them.
                let cursor = try events.last?.int(1) ?? webhook.int(4)
                try await connection.rows(
                    "UPDATE webhooks SET cursor_sequence = \(cursor) WHERE id = \(id)", logger: logger)
            }
            return read
        }
    }

    /// Takes a disabled endpoint's pending deliveries out of the due index (no due time), so that
    /// claims never scan them, or makes them due at `now` when it is enabled again.
    static func park(webhookID: String, enabled: Bool, now: Int64, in connection: PostgresConnection, logger: Logger)
        async throws
    {
        if enabled {
            try await connection.rows(
                """
                UPDATE webhook_deliveries SET next_attempt_at = \(now)
                WHERE webhook_id = \(webhookID) AND state = 'pending' AND next_attempt_at IS NULL
                """, logger: logger)
        } else {
            try await connection.rows(
                """
                UPDATE webhook_deliveries SET next_attempt_at = NULL
                WHERE webhook_id = \(webhookID) AND state = 'pending'
                """, logger: logger)
        }
    }

    public func claimWebhookDeliveries(lease: String, now: Int64, leaseSeconds: Int64, limit: Int) async throws
        -> [ClaimedWebhookDelivery]
    {
        let logger = logger
        let (expires, count) = (now + leaseSeconds, Int64(limit))
        let columns = Self.eventColumns.split(separator: ",").map { "e." + $0.trimmingCharacters(in: .whitespaces) }
            .joined(separator: ", ")
        // A read first, so a pass with nothing due opens no transaction.
        let due = try await statement { client in
            try await client.first(
                """
                SELECT 1 FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= \(now)
                    AND (lease_expires_at IS NULL OR lease_expires_at <= \(now)) LIMIT 1
                """, logger: logger)
        }
        guard due != nil else { return [] }
        return try await transaction { connection in
            // SKIP LOCKED: two nodes claiming at once take different rows; an expired lease is taken over.
            try await connection.rows(
                """
                WITH due AS (
                    SELECT d.webhook_id, d.event_id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
                    WHERE d.state = 'pending' AND d.next_attempt_at <= \(now)
                        AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= \(now)) AND w.enabled
                    ORDER BY d.next_attempt_at LIMIT \(count)
                    FOR UPDATE OF d SKIP LOCKED
                ), claimed AS (
                    UPDATE webhook_deliveries d SET lease_owner = \(lease), lease_expires_at = \(expires)
                    FROM due WHERE d.webhook_id = due.webhook_id AND d.event_id = due.event_id
                    RETURNING d.webhook_id, d.project_id, d.event_id, d.attempt, d.sequence, d.body,
                        d.event_created_at
                )
                SELECT claimed.*, \(unescaped: columns), e.trace_context FROM claimed
                LEFT JOIN events e ON e.project_id = claimed.project_id AND e.sequence = claimed.sequence
                """, logger: logger
            ).map { row in
                ClaimedWebhookDelivery(
                    webhookID: try row.text(0), projectID: try row.text(1), eventID: try row.text(2),
                    attempt: Int(try row.int(3)), lease: lease,
                    event: try row.optionalText(7) == nil ? nil : Self.event(row, at: 7),
                    body: try row.optionalText(5), eventCreatedAt: try row.int(6),
                    traceContext: try row.optionalText(18))
            }
        }
    }

    public func recordWebhookAttempts(_ results: [WebhookAttemptResult]) async throws -> [Bool] {
        guard !results.isEmpty else { return [] }
        let logger = logger
        // One transaction (one commit) for a dispatcher pass's attempts, not one per attempt.
        let webhookIDs = Set(results.map(\.webhookID)).sorted()
        return try await transaction { connection in
            // The webhooks first, in ID order, then their deliveries: the lock order of an update of the
            // endpoint (which parks its deliveries) and of another node recording attempts of the same
            // endpoint, so none of them waits for another crosswise ("deadlock detected").
            try await connection.rows(
                "SELECT id FROM webhooks WHERE id = ANY(\(webhookIDs)) ORDER BY id FOR NO KEY UPDATE", logger: logger)
            return try await Self.record(results, in: connection, logger: logger)
        }
    }

    /// Records a pass's attempts with a fixed number of statements (three, plus the endpoint
    /// bookkeeping of each failed attempt): one per attempt made a pass of 128 deliveries some four
    /// hundred round trips, the dispatcher's largest cost on PostgreSQL. Each delivery is updated only while
    /// `lease` still holds it (the row locked by the update), and only those get an attempt row.
    static func record(_ results: [WebhookAttemptResult], in connection: PostgresConnection, logger: Logger)
        async throws -> [Bool]
    {
        let kept = try await connection.rows(
            """
            UPDATE webhook_deliveries d SET state = r.state, attempt = r.attempt, attempted_at = r.at,
                status_code = CASE WHEN r.has_status THEN r.status_code END,
                error = CASE WHEN r.has_error THEN r.error END, duration_ms = r.duration_ms,
                next_attempt_at = CASE WHEN r.has_next THEN r.next_attempt_at END,
                lease_owner = NULL, lease_expires_at = NULL
            FROM unnest(\(results.map(\.webhookID))::text[], \(results.map(\.eventID))::text[],
                    \(results.map(\.lease))::text[], \(results.map(\.state.rawValue))::text[],
                    \(results.map { Int64($0.attempt) })::bigint[], \(results.map(\.at))::bigint[],
                    \(results.map { $0.statusCode != nil })::boolean[],
                    \(results.map { Int64($0.statusCode ?? 0) })::bigint[],
                    \(results.map { $0.error != nil })::boolean[], \(results.map { $0.error ?? "" })::text[],
                    \(results.map(\.durationMilliseconds))::bigint[], \(results.map { $0.nextAttemptAt != nil })::boolean[],
                    \(results.map { $0.nextAttemptAt ?? 0 })::bigint[])
                AS r(webhook_id, event_id, lease, state, attempt, at, has_status, status_code, has_error, error,
                    duration_ms, has_next, next_attempt_at)
            WHERE d.webhook_id = r.webhook_id AND d.event_id = r.event_id AND d.lease_owner = r.lease
            RETURNING d.webhook_id, d.event_id
            """, logger: logger)
        var keys = Set<[String]>()
        for row in kept { keys.insert([try row.text(0), try row.text(1)]) }
        let recorded = results.map { keys.contains([$0.webhookID, $0.eventID]) }
        let written = zip(results, recorded).filter(\.1).map(\.0)
        guard !written.isEmpty else { return recorded }
        try await connection.rows(
            """
            INSERT INTO webhook_attempts (id, webhook_id, event_id, attempt, at, status_code, error, duration_ms,
                request_body, response_body)
            SELECT r.id, r.webhook_id, r.event_id, r.attempt, r.at, CASE WHEN r.has_status THEN r.status_code END,
                CASE WHEN r.has_error THEN r.error END, r.duration_ms,
                CASE WHEN r.has_request THEN r.request_body END, CASE WHEN r.has_response THEN r.response_body END
            FROM unnest(\(written.map(attemptID))::text[], \(written.map(\.webhookID))::text[],
                    \(written.map(\.eventID))::text[], \(written.map { Int64($0.attempt) })::bigint[],
                    \(written.map(\.at))::bigint[], \(written.map { $0.statusCode != nil })::boolean[],
                    \(written.map { Int64($0.statusCode ?? 0) })::bigint[], \(written.map { $0.error != nil })::boolean[],
                    \(written.map { $0.error ?? "" })::text[], \(written.map(\.durationMilliseconds))::bigint[],
                    \(written.map { $0.requestBody != nil })::boolean[], \(written.map { $0.requestBody ?? "" })::text[],
                    \(written.map { $0.responseBody != nil })::boolean[],
                    \(written.map { ByteBuffer(bytes: $0.responseBody ?? []) })::bytea[])
                AS r(id, webhook_id, event_id, attempt, at, has_status, status_code, has_error, error, duration_ms,
                    has_request, request_body, has_response, response_body)
            """, logger: logger)
        let delivered = Set(written.filter { $0.state == .delivered }.map(\.webhookID)).sorted()
        if !delivered.isEmpty {
            try await connection.rows(
                """
                UPDATE webhooks SET failing_since = NULL WHERE id = ANY(\(delivered)) AND failing_since IS NOT NULL
                """, logger: logger)
        }
        for result in written where result.state != .delivered {
            try await failed(result, in: connection, logger: logger)
        }
        return recorded
    }

    /// The endpoint's side of a failed attempt: its failing time, and disabling it (for a receiver that
    /// answered Gone, or after failing long enough).
    static func failed(_ result: WebhookAttemptResult, in connection: PostgresConnection, logger: Logger)
        async throws
    {
        let failing = try await connection.first(
            """
            UPDATE webhooks SET failing_since = COALESCE(failing_since, \(result.at)) WHERE id = \(result.webhookID)
            RETURNING failing_since <= \(result.failingDisableBefore)
            """, logger: logger)
        let reason = try result.disableReason ?? (failing?.bool(0) == true ? "failing" : nil)
        if let reason,
            let disabled = try await connection.first(
                """
                UPDATE webhooks SET enabled = FALSE, disabled_at = \(result.at), disabled_reason = \(reason),
                    updated_at = \(result.at)
                WHERE id = \(result.webhookID) AND enabled
                RETURNING project_id
                """, logger: logger)
        {
            try await Self.park(
                webhookID: result.webhookID, enabled: false, now: result.at, in: connection, logger: logger)
            var batch = EventBatch(projectID: try disabled.text(0), origin: .webhooks, now: result.at)
            batch.append(.webhookUpdated(webhookID: result.webhookID, changed: ["enabled"]))
            try await Self.append(batch, in: connection, logger: logger)
        }
    }

    public func webhookDeliveries(
        projectID: String, webhookID: String, state: WebhookDeliveryRecord.State?,
        before cursor: WebhookDeliveryCursor?, limit: Int
    ) async throws -> [WebhookDeliveryRecord] {
        let logger = logger
        let state = state?.rawValue
        let (queuedAt, eventID) = (cursor?.queuedAt ?? Int64.max, cursor?.eventID ?? "\u{10FFFF}")
        return try await statement { client in
            try await client.rows(
                """
                SELECT webhook_id, event_id, event_type, sequence, state, attempt, status_code, error, duration_ms,
                    attempted_at, next_attempt_at, queued_at
                FROM webhook_deliveries
                WHERE webhook_id = \(webhookID) AND project_id = \(projectID)
                    AND (\(state)::text IS NULL OR state = \(state)::text)
                    AND (queued_at, event_id) < (\(queuedAt)::bigint, \(eventID)::text)
                ORDER BY queued_at DESC, event_id DESC LIMIT \(Int64(limit))
                """, logger: logger
            ).map(Self.delivery)
        }
    }

    public func replayWebhookEvent(projectID: String, webhookID: String, eventID: String, now: Int64) async throws
        -> Bool?
    {
        // The dispatcher waits for this (a spurious wake when the write failed costs one pass).
        defer { eventSignal.raise() }
        let logger = logger
        return try await transaction { connection -> Bool? in
            guard try await Self.lockWebhook(projectID: projectID, id: webhookID, in: connection, logger: logger)
            else { return nil }
            return try await connection.rows(
                """
                INSERT INTO webhook_deliveries (webhook_id, event_id, project_id, sequence, event_type, event_created_at,
                    state, attempt, next_attempt_at, queued_at)
                SELECT \(webhookID), id, project_id, sequence, type, created_at, 'pending', 0, \(now), \(now)
                FROM events WHERE project_id = \(projectID) AND id = \(eventID)
                \(unescaped: Self.queueConflict)
                RETURNING 1
                """, logger: logger
            ).count == 1
        }
    }

    /// Locks the webhook's row against its deletion (FOR KEY SHARE, which an update of the webhook
    /// does not wait for) until the transaction ends; false when the project has no such webhook.
    /// A delivery queued under this lock never meets a webhook deleted meanwhile (a foreign-key
    /// violation): the deletion either committed first, and this finds nothing, or waits.
    static func lockWebhook(projectID: String, id: String, in connection: PostgresConnection, logger: Logger)
        async throws -> Bool
    {
        try await connection.first(
            "SELECT 1 FROM webhooks WHERE project_id = \(projectID) AND id = \(id) FOR KEY SHARE", logger: logger)
            != nil
    }

    public func replayWebhookEvents(projectID: String, webhookID: String, afterSequence: Int64, now: Int64)
        async throws -> Int?
    {
        // The dispatcher waits for this (a spurious wake when the write failed costs one pass).
        defer { eventSignal.raise() }
        let logger = logger
        return try await transaction { connection -> Int? in
            guard
                let webhook = try await connection.first(
                    """
                    SELECT types, cursor_sequence FROM webhooks WHERE project_id = \(projectID) AND id = \(webhookID)
                    FOR UPDATE
                    """, logger: logger)
            else { return nil }
            // Events after the cursor are queued by the fan-out; these are the ones it already passed.
            let types = WebhookRecord.types(stored: try webhook.optionalText(0))
            let everyType = types.isEmpty
            return try await connection.rows(
                """
                INSERT INTO webhook_deliveries (webhook_id, event_id, project_id, sequence, event_type, event_created_at,
                    state, attempt, next_attempt_at, queued_at)
                SELECT \(webhookID), id, project_id, sequence, type, created_at, 'pending', 0, \(now), \(now)
                FROM events WHERE project_id = \(projectID) AND sequence > \(afterSequence)
                    AND sequence <= \(try webhook.int(1)) AND (\(everyType)::boolean OR type = ANY(\(types)::text[]))
                \(unescaped: Self.queueConflict)
                RETURNING 1
                """, logger: logger
            ).count
        }
    }

    public func queueWebhookTest(projectID: String, webhookID: String, event: EventRecord, body: String, now: Int64)
        async throws -> Bool
    {
        // The dispatcher waits for this (a spurious wake when the write failed costs one pass).
        defer { eventSignal.raise() }
        let logger = logger
        return try await transaction { connection in
            guard try await Self.lockWebhook(projectID: projectID, id: webhookID, in: connection, logger: logger)
            else { return false }
            return try await connection.rows(
                """
                INSERT INTO webhook_deliveries (webhook_id, event_id, project_id, event_type, event_created_at, body,
                    state, attempt, next_attempt_at, queued_at)
                VALUES (\(webhookID), \(event.id), \(projectID), \(event.type), \(event.createdAt), \(body), 'pending', 0,
                    \(now), \(now))
                \(unescaped: Self.queueConflict)
                RETURNING 1
                """, logger: logger
            ).count == 1
        }
    }

    public func oldestPendingWebhookDeliveries() async throws -> [(webhookID: String, eventCreatedAt: Int64)] {
        let logger = logger
        let rows = try await statement { client in
            try await client.rows(
                """
                SELECT webhook_id, MIN(event_created_at) FROM webhook_deliveries WHERE state = 'pending'
                GROUP BY webhook_id
                """, logger: logger
            ).map { [try $0.text(0), String(try $0.int(1))] }
        }
        return rows.map { (webhookID: $0[0], eventCreatedAt: Int64($0[1]) ?? 0) }
    }

    public func deleteFinishedWebhookDeliveries(attemptedBefore: Int64, batchSize: Int) async throws -> Int {
        let logger = logger
        return try await statement { client in
            // The attempt log is kept as long as the deliveries are.
            _ = try await client.rows(
                """
                DELETE FROM webhook_attempts WHERE id IN (
                    SELECT id FROM webhook_attempts WHERE at < \(attemptedBefore) ORDER BY at LIMIT \(Int64(batchSize)))
                """, logger: logger)
            return try await client.rows(
                """
                DELETE FROM webhook_deliveries WHERE (webhook_id, event_id) IN (
                    SELECT webhook_id, event_id FROM webhook_deliveries
                    WHERE state <> 'pending' AND attempted_at < \(attemptedBefore)
                    LIMIT \(Int64(batchSize)) FOR UPDATE SKIP LOCKED)
                RETURNING 1
                """, logger: logger
            ).count
        }
    }
}
