extension SQLiteStore {
    public func registerDevice(_ device: DeviceRecord, origin: EventOrigin) async throws -> DeviceRecord {
        try await writer.write { connection in
            let procedure = try DeviceRegistrationProcedure.make(
                device,
                session: try connection.queryFirst(
                    "SELECT revoked_at, expires_at FROM sessions WHERE id = ?", [.init(device.sessionID)]
                ).map { (revokedAt: $0.optionalInt(0), expiresAt: $0.int(1)) })
            var batch = EventBatch(projectID: device.projectID, origin: origin, now: device.createdAt)
            for step in procedure.steps {
                switch step {
                case .releaseToken(let projectID, let platform, let token):
                    batch.removed(
                        devices: try Self.deleteDevices(
                            where: "project_id = ? AND platform = ? AND token = ?",
                            [.init(projectID), .init(platform), .init(token)], in: connection))
                case .insertDevice(let device):
                    try connection.run(
                        "INSERT INTO devices (\(Self.deviceColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [
                            .init(device.id), .init(device.projectID), .init(device.sessionID),
                            .init(device.profileID), .init(device.platform), .init(device.environment),
                            .init(device.token), .init(device.createdAt),
                        ])
                case .event(let draft):
                    batch.append(draft)
                }
            }
            try Self.append(batch, in: connection)
            return device
        }
    }

    public func useDPoPProof(jkt: String, jti: String, expiresAt: Int64) async throws -> Bool {
        try await writer.write { connection in
            try connection.run(
                "INSERT OR IGNORE INTO used_dpop_proofs (jkt, jti, expires_at) VALUES (?, ?, ?)",
                [.init(jkt), .init(jti), .init(expiresAt)]) == 1
        }
    }

    public func deleteDevice(deviceID: String, profileID: String, now: Int64, origin: EventOrigin) async throws
        -> Bool
    {
        try await writer.write { connection in
            guard
                let device = try connection.queryFirst(
                    "SELECT project_id, session_id FROM devices WHERE id = ? AND profile_id = ?",
                    [.init(deviceID), .init(profileID)])
            else { return false }
            try connection.run("DELETE FROM devices WHERE id = ?", [.init(deviceID)])
            var batch = EventBatch(projectID: device.text(0), origin: origin, now: now)
            batch.append(.deviceRemoved(deviceID: deviceID, profileID: profileID, sessionID: device.text(1)))
            try Self.append(batch, in: connection)
            return true
        }
    }

    public func deleteDevice(
        deviceID: String, callerSessionID: String, ownSessionOnly: Bool, now: Int64, origin: EventOrigin
    ) async throws -> Bool? {
        try await onLiveCaller(sessionID: callerSessionID, now: now, origin: origin) { caller, batch, connection in
            guard
                let device = try connection.queryFirst(
                    """
                    SELECT session_id FROM devices
                    WHERE id = ? AND profile_id = ? AND (? = 0 OR session_id = ?)
                    """,
                    [.init(deviceID), .init(caller.profileID), .init(ownSessionOnly ? 1 : 0), .init(callerSessionID)])
            else { return false }
            try connection.run("DELETE FROM devices WHERE id = ?", [.init(deviceID)])
            batch.append(.deviceRemoved(deviceID: deviceID, profileID: caller.profileID, sessionID: device.text(0)))
            return true
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
            SELECT \(qualifiedProfileColumns)
            FROM profile_aliases a JOIN profiles p ON p.id = a.profile_id
            WHERE a.alias_id = ? AND a.project_id = ? AND p.project_id = ?
            """,
            [.init(id), .init(projectID), .init(projectID)]
        ).map { profile($0) }
    }

    /// Runs `body` in one write transaction on the profile `profileID` (an ID or an alias) as the
    /// transaction found it, then writes the events `body` added to the batch; nil, with nothing
    /// written, when no such profile exists (any more). The one writer holds every row until the
    /// commit, as PostgreSQL's `onLockedProfile` holds the profile's lock.
    func onLockedProfile<T: Sendable>(
        projectID: String, profileID: String, now: Int64, origin: EventOrigin,
        _ body: @escaping @Sendable (ProfileRecord, inout EventBatch, SQLiteConnection) throws -> T
    ) async throws -> T? {
        try await writer.write { connection in
            guard let profile = try Self.resolveProfile(projectID: projectID, id: profileID, in: connection) else {
                return nil
            }
            var batch = EventBatch(projectID: projectID, origin: origin, now: now)
            let result = try body(profile, &batch, connection)
            try Self.append(batch, in: connection)
            return result
        }
    }

    public func profiles(projectID: String, externalID: String) async throws -> [ProfileRecord] {
        try readers.read {
            try $0.query(
                "SELECT \(Self.profileColumns) FROM profiles WHERE project_id = ? AND external_id = ? ORDER BY verified DESC",
                [.init(projectID), .init(externalID)]
            ).map { Self.profile($0) }
        }
    }

    public func eraseProfile(projectID: String, profileID: String, now: Int64, origin: EventOrigin) async throws
        -> Bool
    {
        let erased: Void? = try await onLockedProfile(
            projectID: projectID, profileID: profileID, now: now, origin: origin
        ) { profile, batch, connection in
            let aliases = try connection.query(
                "SELECT alias_id FROM profile_aliases WHERE profile_id = ? ORDER BY created_at, alias_id",
                [.init(profile.id)]
            ).map { $0.text(0) }
            try Self.write(
                ProfileAdminProcedure.erase(profile, aliases: aliases), on: profile, now: now, batch: &batch,
                in: connection)
        }
        return erased != nil
    }

    // MARK: Cleanup

    public func deleteExpired(now: Int64, batchSize: Int) async throws -> CleanupCounts {
        try await writer.write { connection in
            var counts = CleanupCounts()
            // A session that expired without a revoke ends now: `session.ended` (reason `expired`), and
            // `device.removed` for each of its devices, in the events of its project.
            let victims = try connection.query(
                """
                SELECT id, project_id, profile_id, revoked_at FROM sessions WHERE expires_at <= ?
                ORDER BY expires_at LIMIT ?
                """,
                [.init(now), .init(batchSize)]
            ).map { (id: $0.text(0), projectID: $0.text(1), profileID: $0.text(2), revoked: $0.optionalInt(3) != nil) }
            var devices: [(id: String, profileID: String, sessionID: String)] = []
            for victim in victims {
                devices += try Self.deleteDevices(where: "session_id = ?", [.init(victim.id)], in: connection)
                counts.sessions += try connection.run("DELETE FROM sessions WHERE id = ?", [.init(victim.id)])
            }
            counts.devices = devices.count
            for batch in EventBatch.expired(victims, devices: devices, now: now) {
                try Self.append(batch, in: connection)
            }
            (counts.operatorSessions, counts.operatorEnrollments) = try Self.deleteExpiredOperatorRows(
                now: now, batchSize: batchSize, in: connection)
            counts.tokenIDs = try Self.deleteExpiredRows(
                from: "used_token_ids", now: now, limit: batchSize, in: connection)
            counts.dpopProofs = try Self.deleteExpiredRows(
                from: "used_dpop_proofs", now: now, limit: batchSize, in: connection)
            counts.appAttestChallenges = try Self.deleteExpiredRows(
                from: "app_attest_challenges", now: now, limit: batchSize, in: connection)
            return counts
        }
    }

    /// Deletes up to `limit` rows of `table` (one with an `expires_at`) that expired by `now`, the
    /// oldest first; answers how many.
    static func deleteExpiredRows(from table: String, now: Int64, limit: Int, in connection: SQLiteConnection)
        throws -> Int
    {
        try connection.run(
            """
            DELETE FROM \(table) WHERE rowid IN
                (SELECT rowid FROM \(table) WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)
            """,
            [.init(now), .init(limit)])
    }
}
