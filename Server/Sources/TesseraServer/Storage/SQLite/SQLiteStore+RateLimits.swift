extension SQLiteStore {
    public func hitRateLimits(_ keys: [RateLimitKey], window: RateLimitWindow) async throws -> [Int64] {
        guard !keys.isEmpty else { return [] }
        return try await writer.write { connection in
            try keys.map { try Self.hit($0, window: window, in: connection) }
        }
    }

    /// Adds one hit to a counter in one upsert and returns the counter after it.
    static func hit(_ key: RateLimitKey, window: RateLimitWindow, in connection: SQLiteConnection) throws -> Int64 {
        try connection.queryFirst(
            """
            INSERT INTO rate_limit_windows (project_id, bucket, key, window_start, hits, expires_at)
            VALUES (?, ?, ?, ?, 1, ?)
            ON CONFLICT (project_id, bucket, key, window_start) DO UPDATE SET hits = hits + 1
            RETURNING hits
            """,
            [.init(key.projectID), .init(key.bucket.rawValue), .init(key.key), .init(window.start), .init(window.end)]
        )?.int(0) ?? 1
    }

    public func deleteStale(now: Int64, anonymousCreatedBefore: Int64?, batchSize: Int) async throws
        -> CleanupCounts
    {
        try await writer.write { connection in
            var counts = CleanupCounts()
            counts.rateLimitWindows = try Self.deleteExpiredRows(
                from: "rate_limit_windows", now: now, limit: batchSize, in: connection)
            guard let anonymousCreatedBefore else { return counts }
            let victims = try connection.query(
                """
                SELECT id, project_id FROM profiles p
                WHERE kind = 'anonymous' AND created_at < ? AND blocked_at IS NULL AND NOT EXISTS (
                    SELECT 1 FROM sessions s WHERE s.profile_id = p.id AND s.revoked_at IS NULL AND s.expires_at > ?)
                ORDER BY created_at LIMIT ?
                """,
                [.init(anonymousCreatedBefore), .init(now), .init(batchSize)]
            ).map { (id: $0.text(0), projectID: $0.text(1)) }
            var aliases: [(id: String, profileID: String)] = []
            var sessions: [(id: String, projectID: String, profileID: String, revoked: Bool)] = []
            var devices: [(id: String, profileID: String, sessionID: String)] = []
            for (id, _) in victims {
                // Sessions go with the profile (ON DELETE CASCADE), and devices with their sessions.
                sessions += try connection.query(
                    "SELECT id, project_id, profile_id, revoked_at FROM sessions WHERE profile_id = ?", [.init(id)]
                ).map { ($0.text(0), $0.text(1), $0.text(2), $0.optionalInt(3) != nil) }
                devices += try Self.deleteDevices(
                    where: "profile_id = ? OR session_id IN (SELECT id FROM sessions WHERE profile_id = ?)",
                    [.init(id), .init(id)], in: connection)
                aliases += try connection.query(
                    "SELECT alias_id, profile_id FROM profile_aliases WHERE profile_id = ?", [.init(id)]
                ).map { ($0.text(0), $0.text(1)) }
                // Their App Attest records go with the installations (a new start of one starts afresh).
                try connection.run(
                    """
                    DELETE FROM app_attest_installations WHERE (project_id, installation_id) IN
                        (SELECT project_id, installation_id FROM installations WHERE profile_id = ?)
                    """, [.init(id)])
                try connection.run("DELETE FROM installations WHERE profile_id = ?", [.init(id)])
                try connection.run("DELETE FROM profile_aliases WHERE profile_id = ?", [.init(id)])
                try connection.run("DELETE FROM profiles WHERE id = ?", [.init(id)])
            }
            // Each deletion is told to the app's backend: `profile.erased` (actor: the cleanup service).
            for batch in EventBatch.retired(
                profiles: victims, aliases: aliases, sessions: sessions, devices: devices, now: now)
            {
                try Self.append(batch, in: connection)
            }
            counts.anonymousProfiles = victims.count
            return counts
        }
    }
}
