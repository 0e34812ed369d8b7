import PostgresNIO

extension PostgresStore {
    public func registerDevice(_ device: DeviceRecord) async throws -> DeviceRecord {
        let logger = logger
        return try await transaction { connection in
            // The session may have ended since the request was authenticated: a device is never bound
            // to an ended session. FOR SHARE makes a concurrent revoke or erasure wait for this
            // transaction, or this one see it.
            guard
                let session = try await connection.first(
                    "SELECT revoked_at, expires_at FROM sessions WHERE id = \(device.sessionID) FOR SHARE",
                    logger: logger)
            else { throw CoreError.sessionNotFound }
            if try session.optionalInt(0) != nil { throw CoreError.sessionRevoked }
            if try session.int(1) <= device.createdAt { throw CoreError.sessionExpired }
            try await connection.rows(
                """
                DELETE FROM devices
                WHERE project_id = \(device.projectID) AND platform = \(device.platform) AND token = \(device.token)
                """, logger: logger)
            try await connection.rows(
                """
                INSERT INTO devices (\(unescaped: Self.deviceColumns))
                VALUES (\(device.id), \(device.projectID), \(device.sessionID), \(device.profileID), \(device.platform),
                    \(device.environment), \(device.token), \(device.createdAt))
                """, logger: logger)
            return device
        }
    }

    public func deleteDevice(deviceID: String, profileID: String) async throws -> Bool {
        let logger = logger
        return try await statement { client in
            try await !client.rows(
                "DELETE FROM devices WHERE id = \(deviceID) AND profile_id = \(profileID) RETURNING id", logger: logger
            ).isEmpty
        }
    }

    public func liveDevices(profileID: String, now: Int64) async throws -> [DeviceRecord] {
        let logger = logger
        return try await statement { client in
            try await client.rows(
                """
                SELECT d.id, d.project_id, d.session_id, d.profile_id, d.platform, d.environment, d.token, d.created_at,
                    s.kind
                FROM devices d JOIN sessions s ON s.id = d.session_id
                WHERE d.profile_id = \(profileID) AND s.revoked_at IS NULL AND s.expires_at > \(now)
                ORDER BY d.created_at, d.id
                """, logger: logger
            ).map { row in
                var device = try Self.device(row)
                device.sessionKind = SessionRecord.Kind(rawValue: try row.text(8))
                return device
            }
        }
    }

    // MARK: Admin

    public func profile(projectID: String, id: String) async throws -> ProfileRecord? {
        let logger = logger
        return try await transaction { connection in
            try await Self.resolveProfile(projectID: projectID, id: id, in: connection, logger: logger)
        }
    }

    public func profiles(projectID: String, externalID: String) async throws -> [ProfileRecord] {
        let logger = logger
        return try await statement { client in
            try await client.rows(
                """
                SELECT \(unescaped: Self.profileColumns) FROM profiles
                WHERE project_id = \(projectID) AND external_id = \(externalID) ORDER BY verified DESC
                """, logger: logger
            ).map(Self.profile)
        }
    }

    public func eraseProfile(projectID: String, profileID: String) async throws -> Bool {
        let logger = logger
        return try await transaction { connection in
            guard
                let profile = try await Self.resolveProfile(
                    projectID: projectID, id: profileID, in: connection, logger: logger)
            else { return false }
            try await connection.rows("SELECT id FROM profiles WHERE id = \(profile.id) FOR UPDATE", logger: logger)
            try await connection.rows(
                """
                DELETE FROM devices
                WHERE profile_id = \(profile.id) OR session_id IN (SELECT id FROM sessions WHERE profile_id = \(profile.id))
                """, logger: logger)
            try await connection.rows("DELETE FROM sessions WHERE profile_id = \(profile.id)", logger: logger)
            try await connection.rows("DELETE FROM profile_aliases WHERE profile_id = \(profile.id)", logger: logger)
            try await connection.rows(
                "UPDATE installations SET profile_id = NULL WHERE profile_id = \(profile.id)", logger: logger)
            try await connection.rows("DELETE FROM profiles WHERE id = \(profile.id)", logger: logger)
            return true
        }
    }

    // MARK: Cleanup

    /// Deletes up to `batchSize` expired sessions (with their devices) and used token IDs, skipping
    /// rows another node is deleting right now (`FOR UPDATE SKIP LOCKED`), so nodes can clean at once.
    public func deleteExpired(now: Int64, batchSize: Int) async throws -> CleanupCounts {
        let logger = logger
        let limit = Int64(batchSize)
        return try await statement { client in
            let sessions = try await client.first(
                """
                WITH victims AS (
                    SELECT id FROM sessions WHERE expires_at <= \(now) ORDER BY expires_at LIMIT \(limit)
                    FOR UPDATE SKIP LOCKED
                ), devices_gone AS (
                    DELETE FROM devices WHERE session_id IN (SELECT id FROM victims) RETURNING id
                ), sessions_gone AS (
                    DELETE FROM sessions WHERE id IN (SELECT id FROM victims) RETURNING id
                )
                SELECT (SELECT COUNT(*) FROM sessions_gone), (SELECT COUNT(*) FROM devices_gone)
                """, logger: logger)
            let tokenIDs = try await client.first(
                """
                WITH victims AS (
                    SELECT project_id, jti FROM used_token_ids WHERE expires_at <= \(now) ORDER BY expires_at
                    LIMIT \(limit) FOR UPDATE SKIP LOCKED
                ), gone AS (
                    DELETE FROM used_token_ids u USING victims v
                    WHERE u.project_id = v.project_id AND u.jti = v.jti RETURNING 1
                )
                SELECT COUNT(*) FROM gone
                """, logger: logger)
            var counts = CleanupCounts()
            counts.sessions = Int(try sessions?.int(0) ?? 0)
            counts.devices = Int(try sessions?.int(1) ?? 0)
            counts.tokenIDs = Int(try tokenIDs?.int(0) ?? 0)
            return counts
        }
    }
}
