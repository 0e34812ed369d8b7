import Logging
import PostgresNIO

extension PostgresStore {
    public func hitRateLimits(_ keys: [RateLimitKey], window: RateLimitWindow) async throws -> [Int64] {
        guard !keys.isEmpty else { return [] }
        let logger = logger
        // One autocommitted statement; counters are taken in one order so two nodes never deadlock.
        let ordered = keys.sorted()
        let projects = ordered.map(\.projectID)
        let buckets = ordered.map(\.bucket.rawValue)
        let names = ordered.map(\.key)
        let rows = try await statement { client in
            try await client.rows(
                """
                INSERT INTO rate_limit_windows AS w (project_id, bucket, key, window_start, hits, expires_at)
                SELECT t.project_id, t.bucket, t.key, \(window.start), 1, \(window.end)
                FROM unnest(\(projects)::text[], \(buckets)::text[], \(names)::text[]) WITH ORDINALITY
                    AS t(project_id, bucket, key, position)
                ORDER BY t.position
                ON CONFLICT (project_id, bucket, key, window_start) DO UPDATE SET hits = w.hits + 1
                RETURNING project_id, bucket, key, hits
                """, logger: logger
            ).map { row in
                (try row.text(0), try row.text(1), try row.text(2), try row.int(3))
            }
        }
        var counts: [RateLimitKey: Int64] = [:]
        for (project, bucket, name, hits) in rows {
            guard let bucket = RateLimitKey.Bucket(rawValue: bucket) else { continue }
            counts[RateLimitKey(projectID: project, bucket: bucket, key: name)] = hits
        }
        return keys.map { counts[$0] ?? 1 }
    }

    /// Adds one hit to a counter in one upsert and returns the counter after it.
    static func hit(_ key: RateLimitKey, window: RateLimitWindow, in connection: PostgresConnection, logger: Logger)
        async throws -> Int64
    {
        try await connection.first(
            """
            INSERT INTO rate_limit_windows AS w (project_id, bucket, key, window_start, hits, expires_at)
            VALUES (\(key.projectID), \(key.bucket.rawValue), \(key.key), \(window.start), 1, \(window.end))
            ON CONFLICT (project_id, bucket, key, window_start) DO UPDATE SET hits = w.hits + 1
            RETURNING hits
            """, logger: logger
        )?.int(0) ?? 1
    }

    /// Deletes finished rate-limit windows and old anonymous profiles without a live session,
    /// skipping rows another node is deleting (`FOR UPDATE SKIP LOCKED`), so nodes can clean at once.
    public func deleteStale(now: Int64, anonymousCreatedBefore: Int64?, batchSize: Int) async throws
        -> CleanupCounts
    {
        let logger = logger
        let limit = Int64(batchSize)
        var counts = CleanupCounts()
        counts.rateLimitWindows = try await statement { client in
            try await Self.deleteExpiredRows(
                from: "rate_limit_windows", key: ["project_id", "bucket", "key", "window_start"], now: now,
                limit: limit, in: client, logger: logger)
        }
        guard let anonymousCreatedBefore else { return counts }
        counts.anonymousProfiles = try await transaction { connection in
            // Candidates locked (an anonymous restore holds its profile FOR SHARE, so one under way is
            // skipped), then checked again in a statement of their own: a restore that committed a
            // session between this statement's snapshot and its lock is seen there, and its profile
            // is kept. A restore that comes later locks the profile first and waits for this one.
            let candidates = try await connection.rows(
                """
                SELECT p.id, p.project_id FROM profiles p
                WHERE p.kind = 'anonymous' AND p.created_at < \(anonymousCreatedBefore) AND p.blocked_at IS NULL
                    AND NOT EXISTS (
                    SELECT 1 FROM sessions s
                    WHERE s.profile_id = p.id AND s.revoked_at IS NULL AND s.expires_at > \(now))
                ORDER BY p.created_at LIMIT \(limit)
                FOR UPDATE SKIP LOCKED
                """, logger: logger
            ).map { try $0.text(0) }
            guard !candidates.isEmpty else { return 0 }
            let victims = try await connection.rows(
                """
                SELECT p.id, p.project_id FROM profiles p
                WHERE p.id = ANY(\(candidates)) AND p.kind = 'anonymous' AND p.blocked_at IS NULL
                    AND NOT EXISTS (
                    SELECT 1 FROM sessions s
                    WHERE s.profile_id = p.id AND s.revoked_at IS NULL AND s.expires_at > \(now))
                """, logger: logger
            ).map { (id: try $0.text(0), projectID: try $0.text(1)) }
            guard !victims.isEmpty else { return 0 }
            let ids = victims.map(\.id)
            // Their installations and sessions locked before anything is decided from them, in the
            // lock order (profiles, installations, sessions by ID): a revoke under way commits first
            // and its `session.ended` is seen here (not written twice), a device registration under
            // way (it holds its session FOR SHARE) commits first and its device is removed below with
            // its `device.removed`, not by the cascade.
            try await connection.rows(
                """
                SELECT 1 FROM installations WHERE profile_id = ANY(\(ids))
                ORDER BY project_id, installation_id FOR UPDATE
                """, logger: logger)
            let sessions = try await connection.rows(
                """
                SELECT id, project_id, profile_id, revoked_at IS NOT NULL FROM sessions WHERE profile_id = ANY(\(ids))
                ORDER BY id FOR UPDATE
                """, logger: logger
            ).map {
                (id: try $0.text(0), projectID: try $0.text(1), profileID: try $0.text(2), revoked: try $0.bool(3))
            }
            let devices = try await Self.deleteDevices(
                """
                DELETE FROM devices
                WHERE profile_id = ANY(\(ids)) OR session_id IN (SELECT id FROM sessions WHERE profile_id = ANY(\(ids)))
                RETURNING id, profile_id, session_id
                """, in: connection, logger: logger)
            // Their App Attest records go with the installations (a new start of one starts afresh).
            try await connection.rows(
                """
                DELETE FROM app_attest_installations a USING installations i
                WHERE i.profile_id = ANY(\(ids)) AND a.project_id = i.project_id AND a.installation_id = i.installation_id
                """, logger: logger)
            try await connection.rows("DELETE FROM installations WHERE profile_id = ANY(\(ids))", logger: logger)
            let aliases = try await connection.rows(
                "DELETE FROM profile_aliases WHERE profile_id = ANY(\(ids)) RETURNING alias_id, profile_id",
                logger: logger
            ).map { (id: try $0.text(0), profileID: try $0.text(1)) }
            // Sessions go with their profile (ON DELETE CASCADE).
            try await connection.rows("DELETE FROM profiles WHERE id = ANY(\(ids))", logger: logger)
            // Each deletion is told to the app's backend: `profile.erased` (actor: the cleanup service).
            for batch in EventBatch.retired(
                profiles: victims, aliases: aliases, sessions: sessions, devices: devices, now: now)
            {
                try await Self.append(batch, in: connection, logger: logger)
            }
            return victims.count
        }
        return counts
    }
}
