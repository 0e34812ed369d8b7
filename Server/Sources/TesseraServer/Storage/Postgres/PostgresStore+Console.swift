import Foundation
import PostgresNIO

/// What the console keeps of its own: one-time flashes, lockout counters it reads and clears, API-key
/// hints and the audit of operator accounts.
extension PostgresStore {
    public func saveConsoleFlash(id: String, sessionID: String, sealed: [UInt8], expiresAt: Int64, now: Int64)
        async throws
    {
        let logger = logger
        try await transaction { connection in
            _ = try await connection.rows(
                "DELETE FROM console_flashes WHERE session_id = \(sessionID) AND expires_at <= \(now)",
                logger: logger)
            _ = try await connection.rows(
                """
                INSERT INTO console_flashes (id, session_id, sealed, expires_at)
                VALUES (\(id), \(sessionID), \(sealed.bytea), \(expiresAt))
                """, logger: logger)
        }
    }

    public func takeConsoleFlash(id: String, sessionID: String, now: Int64) async throws -> [UInt8]? {
        let logger = logger
        return try await statement { client in
            guard
                let row = try await client.first(
                    """
                    DELETE FROM console_flashes WHERE id = \(id) AND session_id = \(sessionID)
                    RETURNING sealed, expires_at
                    """, logger: logger)
            else { return nil }
            return try row.int(1) > now ? try row.bytes(0) : nil
        }
    }

    public func rateLimitCounts(_ keys: [RateLimitKey], window: RateLimitWindow) async throws -> [Int64] {
        let logger = logger
        return try await statement { client in
            var counts: [Int64] = []
            for key in keys {
                let row = try await client.first(
                    """
                    SELECT hits FROM rate_limit_windows
                    WHERE project_id = \(key.projectID) AND bucket = \(key.bucket.rawValue) AND key = \(key.key)
                        AND window_start = \(window.start)
                    """, logger: logger)
                counts.append(try row?.int(0) ?? 0)
            }
            return counts
        }
    }

    @discardableResult
    public func clearRateLimits(projectID: String, bucket: RateLimitKey.Bucket, key: String) async throws -> Int {
        let logger = logger
        let prefix = key + " "
        return try await statement { client in
            try await client.rows(
                """
                DELETE FROM rate_limit_windows WHERE project_id = \(projectID) AND bucket = \(bucket.rawValue)
                    AND (key = \(key) OR starts_with(key, \(prefix)))
                RETURNING 1
                """, logger: logger
            ).count
        }
    }

    public func saveAPIKeyHint(projectID: String, keyHash: [UInt8], hint: String) async throws {
        let logger = logger
        try await statement { client in
            _ = try await client.rows(
                """
                INSERT INTO api_key_hints (key_hash, project_id, hint) VALUES (\(keyHash.bytea), \(projectID), \(hint))
                ON CONFLICT (key_hash) DO UPDATE SET hint = excluded.hint
                """, logger: logger)
        }
    }

    public func apiKeyHints(projectID: String) async throws -> [[UInt8]: String] {
        let logger = logger
        return try await statement { client in
            var hints: [[UInt8]: String] = [:]
            for row in try await client.rows(
                "SELECT key_hash, hint FROM api_key_hints WHERE project_id = \(projectID)", logger: logger)
            {
                hints[try row.bytes(0)] = try row.text(1)
            }
            return hints
        }
    }

    public func appendOperatorAudit(_ entry: OperatorAuditRecord) async throws {
        let logger = logger
        try await statement { client in
            _ = try await client.rows(
                """
                INSERT INTO operator_audit
                    (id, type, operator_email, actor_email, client_address, detail, created_at)
                VALUES (\(entry.id), \(entry.kind.rawValue), \(entry.operatorEmail), \(entry.actorEmail),
                    \(entry.clientAddress), \(entry.detail), \(entry.createdAt))
                """, logger: logger)
        }
    }

    public func operatorAudit(before: String?, limit: Int) async throws -> [OperatorAuditRecord] {
        let logger = logger
        let before = before ?? "~"
        return try await statement { client in
            try await client.rows(
                """
                SELECT id, type, operator_email, actor_email, client_address, detail, created_at
                FROM operator_audit WHERE id < \(before) ORDER BY id DESC LIMIT \(limit)
                """, logger: logger
            ).compactMap { row in
                guard let kind = OperatorAuditRecord.Kind(rawValue: try row.text(1)) else { return nil }
                return OperatorAuditRecord(
                    id: try row.text(0), kind: kind, operatorEmail: try row.text(2),
                    actorEmail: try row.optionalText(3), clientAddress: try row.optionalText(4),
                    detail: try row.optionalText(5), createdAt: try row.int(6))
            }
        }
    }
}

extension PostgresStore {
    /// A time-ordered ID for an attempt of the log, by the wall clock's milliseconds: attempts made in
    /// one second of the server's clock still list in the order they were recorded.
    static func attemptID(_ result: WebhookAttemptResult) -> String {
        TimeOrderedID.make(prefix: "wat_")
    }

    public func webhookAttempts(projectID: String, webhookID: String, eventID: String?, limit: Int) async throws
        -> [WebhookAttemptRecord]
    {
        let logger = logger
        return try await statement { client in
            let rows: [PostgresCells]
            if let eventID {
                rows = try await client.rows(
                    """
                    SELECT a.id, a.webhook_id, a.event_id, a.attempt, a.at, a.status_code, a.error, a.duration_ms,
                        a.request_body, a.response_body
                    FROM webhook_attempts a JOIN webhooks w ON w.id = a.webhook_id
                    WHERE a.webhook_id = \(webhookID) AND w.project_id = \(projectID) AND a.event_id = \(eventID)
                    ORDER BY a.at DESC, a.id DESC LIMIT \(Int64(limit))
                    """, logger: logger)
            } else {
                rows = try await client.rows(
                    """
                    SELECT a.id, a.webhook_id, a.event_id, a.attempt, a.at, a.status_code, a.error, a.duration_ms,
                        a.request_body, a.response_body
                    FROM webhook_attempts a JOIN webhooks w ON w.id = a.webhook_id
                    WHERE a.webhook_id = \(webhookID) AND w.project_id = \(projectID)
                    ORDER BY a.at DESC, a.id DESC LIMIT \(Int64(limit))
                    """, logger: logger)
            }
            return try rows.map { row in
                WebhookAttemptRecord(
                    id: try row.text(0), webhookID: try row.text(1), eventID: try row.text(2),
                    attempt: Int(try row.int(3)), at: try row.int(4),
                    statusCode: try row.optionalInt(5).map { Int($0) }, error: try row.optionalText(6),
                    durationMilliseconds: try row.int(7), requestBody: try row.optionalText(8),
                    responseBody: try row.optionalBytes(9))
            }
        }
    }
}
