extension SQLiteStore {
    public func registerDevice(_ device: DeviceRecord) async throws -> DeviceRecord {
        try await writer.write { connection in
            // The session may have ended since the request was authenticated (a revoke or an erasure
            // that committed in between): a device is never bound to an ended session.
            guard
                let session = try connection.queryFirst(
                    "SELECT revoked_at, expires_at FROM sessions WHERE id = ?", [.init(device.sessionID)])
            else { throw CoreError.sessionNotFound }
            if session.optionalInt(0) != nil { throw CoreError.sessionRevoked }
            if session.int(1) <= device.createdAt { throw CoreError.sessionExpired }
            try connection.run(
                "DELETE FROM devices WHERE project_id = ? AND platform = ? AND token = ?",
                [.init(device.projectID), .init(device.platform), .init(device.token)])
            try connection.run(
                "INSERT INTO devices (\(Self.deviceColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    .init(device.id), .init(device.projectID), .init(device.sessionID), .init(device.profileID),
                    .init(device.platform), .init(device.environment), .init(device.token), .init(device.createdAt),
                ])
            return device
        }
    }

    public func deleteDevice(deviceID: String, profileID: String) async throws -> Bool {
        try await writer.write { connection in
            try connection.run(
                "DELETE FROM devices WHERE id = ? AND profile_id = ?", [.init(deviceID), .init(profileID)]) == 1
        }
    }

    public func liveDevices(profileID: String, now: Int64) async throws -> [DeviceRecord] {
        try readers.read {
            try $0.query(
                """
                SELECT d.id, d.project_id, d.session_id, d.profile_id, d.platform, d.environment, d.token, d.created_at,
                    s.kind
                FROM devices d JOIN sessions s ON s.id = d.session_id
                WHERE d.profile_id = ? AND s.revoked_at IS NULL AND s.expires_at > ?
                ORDER BY d.created_at, d.id
                """,
                [.init(profileID), .init(now)]
            ).map { row in
                var device = Self.device(row)
                device.sessionKind = SessionRecord.Kind(rawValue: row.text(8))
                return device
            }
        }
    }

    // MARK: Admin

    public func profile(projectID: String, id: String) async throws -> ProfileRecord? {
        try readers.read { connection in
            try Self.resolveProfile(projectID: projectID, id: id, in: connection)
        }
    }

    static func resolveProfile(projectID: String, id: String, in connection: SQLiteConnection) throws -> ProfileRecord?
    {
        if let row = try connection.queryFirst(
            "SELECT \(profileColumns) FROM profiles WHERE id = ? AND project_id = ?", [.init(id), .init(projectID)])
        {
            return profile(row)
        }
        return try connection.queryFirst(
            """
            SELECT p.id, p.project_id, p.kind, p.external_id, p.verified, p.name, p.avatar_url, p.email,
                p.created_at, p.updated_at, p.blocked_at
            FROM profile_aliases a JOIN profiles p ON p.id = a.profile_id
            WHERE a.alias_id = ? AND a.project_id = ? AND p.project_id = ?
            """,
            [.init(id), .init(projectID), .init(projectID)]
        ).map { profile($0) }
    }

    public func profiles(projectID: String, externalID: String) async throws -> [ProfileRecord] {
        try readers.read {
            try $0.query(
                "SELECT \(Self.profileColumns) FROM profiles WHERE project_id = ? AND external_id = ? ORDER BY verified DESC",
                [.init(projectID), .init(externalID)]
            ).map { Self.profile($0) }
        }
    }

    public func eraseProfile(projectID: String, profileID: String) async throws -> Bool {
        try await writer.write { connection in
            guard let profile = try Self.resolveProfile(projectID: projectID, id: profileID, in: connection) else {
                return false
            }
            try connection.run(
                "DELETE FROM devices WHERE profile_id = ? OR session_id IN (SELECT id FROM sessions WHERE profile_id = ?)",
                [.init(profile.id), .init(profile.id)])
            try connection.run("DELETE FROM sessions WHERE profile_id = ?", [.init(profile.id)])
            try connection.run("DELETE FROM profile_aliases WHERE profile_id = ?", [.init(profile.id)])
            try connection.run("UPDATE installations SET profile_id = NULL WHERE profile_id = ?", [.init(profile.id)])
            try connection.run("DELETE FROM profiles WHERE id = ?", [.init(profile.id)])
            return true
        }
    }

    // MARK: Cleanup

    public func deleteExpired(now: Int64, batchSize: Int) async throws -> CleanupCounts {
        try await writer.write { connection in
            var counts = CleanupCounts()
            counts.devices = try connection.run(
                """
                DELETE FROM devices WHERE session_id IN
                    (SELECT id FROM sessions WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)
                """,
                [.init(now), .init(batchSize)])
            counts.sessions = try connection.run(
                "DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)",
                [.init(now), .init(batchSize)])
            counts.tokenIDs = try connection.run(
                """
                DELETE FROM used_token_ids WHERE rowid IN
                    (SELECT rowid FROM used_token_ids WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)
                """,
                [.init(now), .init(batchSize)])
            return counts
        }
    }
}
