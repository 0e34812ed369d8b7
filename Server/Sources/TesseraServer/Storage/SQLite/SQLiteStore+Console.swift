import Foundation

/// What the console keeps of its own: one-time flashes, lockout counters it reads and clears, API-key
/// hints and the audit of operator accounts.
extension SQLiteStore {
    public func saveConsoleFlash(id: String, sessionID: String, sealed: [UInt8], expiresAt: Int64, now: Int64)
        async throws
    {
        _ = try await writer.write { connection in
            try connection.run(
                "DELETE FROM console_flashes WHERE session_id = ? AND expires_at <= ?", [.init(sessionID), .init(now)])
            return try connection.run(
                "INSERT INTO console_flashes (id, session_id, sealed, expires_at) VALUES (?, ?, ?, ?)",
                [.init(id), .init(sessionID), .init(sealed), .init(expiresAt)])
        }
    }

    public func takeConsoleFlash(id: String, sessionID: String, now: Int64) async throws -> [UInt8]? {
        try await writer.write { connection in
            try connection.queryFirst(
                "DELETE FROM console_flashes WHERE id = ? AND session_id = ? RETURNING sealed, expires_at",
                [.init(id), .init(sessionID)]
            ).flatMap { $0.int(1) > now ? $0.blob(0) : nil }
        }
    }

    public func rateLimitCounts(_ keys: [RateLimitKey], window: RateLimitWindow) async throws -> [Int64] {
        try readers.read { connection in
            try keys.map { key in
                try connection.queryFirst(
                    """
                    SELECT hits FROM rate_limit_windows
                    WHERE project_id = ? AND bucket = ? AND key = ? AND window_start = ?
                    """,
                    [.init(key.projectID), .init(key.bucket.rawValue), .init(key.key), .init(window.start)]
                )?.int(0) ?? 0
            }
        }
    }

    @discardableResult
    public func clearRateLimits(projectID: String, bucket: RateLimitKey.Bucket, key: String) async throws -> Int {
        try await writer.write { connection in
            try connection.run(
                """
                DELETE FROM rate_limit_windows WHERE project_id = ? AND bucket = ?
                    AND (key = ? OR substr(key, 1, ?) = ?)
                """,
                [
                    .init(projectID), .init(bucket.rawValue), .init(key), .init(key.utf8.count + 1),
                    .init(key + " "),
                ])
        }
    }

    public func saveAPIKeyHint(projectID: String, keyHash: [UInt8], hint: String) async throws {
        _ = try await writer.write { connection in
            try connection.run(
                """
                INSERT INTO api_key_hints (key_hash, project_id, hint) VALUES (?, ?, ?)
                ON CONFLICT (key_hash) DO UPDATE SET hint = excluded.hint
                """,
                [.init(keyHash), .init(projectID), .init(hint)])
        }
    }

    public func apiKeyHints(projectID: String) async throws -> [[UInt8]: String] {
        try readers.read { connection in
            var hints: [[UInt8]: String] = [:]
            for row in try connection.query(
                "SELECT key_hash, hint FROM api_key_hints WHERE project_id = ?", [.init(projectID)])
            {
                hints[row.blob(0)] = row.text(1)
            }
            return hints
        }
    }

    public func appendOperatorAudit(_ entry: OperatorAuditRecord) async throws {
        _ = try await writer.write { connection in
            try connection.run(
                """
                INSERT INTO operator_audit
                    (id, type, operator_email, actor_email, client_address, detail, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .init(entry.id), .init(entry.kind.rawValue), .init(entry.operatorEmail), .init(entry.actorEmail),
                    .init(entry.clientAddress), .init(entry.detail), .init(entry.createdAt),
                ])
        }
    }

    public func operatorAudit(before: String?, limit: Int) async throws -> [OperatorAuditRecord] {
        try readers.read { connection in
            try connection.query(
                """
                SELECT id, type, operator_email, actor_email, client_address, detail, created_at
                FROM operator_audit WHERE id < ? ORDER BY id DESC LIMIT ?
                """,
                [.init(before ?? "~"), .init(limit)]
            ).compactMap { row in
                guard let kind = OperatorAuditRecord.Kind(rawValue: row.text(1)) else { return nil }
                return OperatorAuditRecord(
                    id: row.text(0), kind: kind, operatorEmail: row.text(2), actorEmail: row.optionalText(3),
                    clientAddress: row.optionalText(4), detail: row.optionalText(5), createdAt: row.int(6))
            }
        }
    }
}

extension SQLiteStore {
    /// A time-ordered ID for an attempt of the log, by the wall clock's milliseconds: attempts made in
    /// one second of the server's clock still list in the order they were recorded.
    static func attemptID(_ result: WebhookAttemptResult) -> String {
        TimeOrderedID.make(prefix: "wat_")
    }

    public func webhookAttempts(projectID: String, webhookID: String, eventID: String?, limit: Int) async throws
        -> [WebhookAttemptRecord]
    {
        try readers.read { connection in
            try connection.query(
                """
                SELECT a.id, a.webhook_id, a.event_id, a.attempt, a.at, a.status_code, a.error, a.duration_ms,
                    a.request_body, a.response_body
                FROM webhook_attempts a JOIN webhooks w ON w.id = a.webhook_id
                WHERE a.webhook_id = ? AND w.project_id = ? AND (? IS NULL OR a.event_id = ?)
                ORDER BY a.at DESC, a.id DESC LIMIT ?
                """,
                [.init(webhookID), .init(projectID), .init(eventID), .init(eventID), .init(limit)]
            ).map { row in
                WebhookAttemptRecord(
                    id: row.text(0), webhookID: row.text(1), eventID: row.text(2), attempt: Int(row.int(3)),
                    at: row.int(4), statusCode: row.optionalInt(5).map { Int($0) }, error: row.optionalText(6),
                    durationMilliseconds: row.int(7), requestBody: row.optionalText(8),
                    responseBody: row[9].bytes)
            }
        }
    }
}
