import PostgresNIO

extension PostgresStore {
    public func registerDevice(_ device: DeviceRecord, origin: EventOrigin) async throws -> DeviceRecord {
        let logger = logger
        return try await transaction { connection in
            // FOR SHARE makes a concurrent revoke or erasure of the session wait for this
            // transaction, or this one see it.
            let procedure = try DeviceRegistrationProcedure.make(
                device,
                session: try await connection.first(
                    "SELECT revoked_at, expires_at FROM sessions WHERE id = \(device.sessionID) FOR SHARE",
                    logger: logger
                ).map { (revokedAt: try $0.optionalInt(0), expiresAt: try $0.int(1)) })
            var batch = EventBatch(projectID: device.projectID, origin: origin, now: device.createdAt)
            for step in procedure.steps {
                switch step {
                case .releaseToken(let projectID, let platform, let token):
                    batch.removed(
                        devices: try await Self.deleteDevices(
                            """
                            DELETE FROM devices
                            WHERE project_id = \(projectID) AND platform = \(platform) AND token = \(token)
                            RETURNING id, profile_id, session_id
                            """, in: connection, logger: logger))
                case .insertDevice(let device):
                    try await connection.rows(
                        """
                        INSERT INTO devices (\(unescaped: Self.deviceColumns))
                        VALUES (\(device.id), \(device.projectID), \(device.sessionID), \(device.profileID),
                            \(device.platform), \(device.environment), \(device.token), \(device.createdAt))
                        """, logger: logger)
                case .event(let draft):
                    batch.append(draft)
                }
            }
            try await Self.append(batch, in: connection, logger: logger)
            return device
        }
    }

    public func useDPoPProof(jkt: String, jti: String, expiresAt: Int64) async throws -> Bool {
        let logger = logger
        return try await statement { client in
            try await client.first(
                """
                INSERT INTO used_dpop_proofs (jkt, jti, expires_at) VALUES (\(jkt), \(jti), \(expiresAt))
                ON CONFLICT DO NOTHING RETURNING 1
                """, logger: logger) != nil
        }
    }

    public func deleteDevice(deviceID: String, profileID: String, now: Int64, origin: EventOrigin) async throws
        -> Bool
    {
        let logger = logger
        return try await transaction { connection in
            guard
                let row = try await connection.first(
                    """
                    DELETE FROM devices WHERE id = \(deviceID) AND profile_id = \(profileID)
                    RETURNING project_id, session_id
                    """, logger: logger)
            else { return false }
            var batch = EventBatch(projectID: try row.text(0), origin: origin, now: now)
            batch.append(.deviceRemoved(deviceID: deviceID, profileID: profileID, sessionID: try row.text(1)))
            try await Self.append(batch, in: connection, logger: logger)
            return true
        }
    }

    public func deleteDevice(
        deviceID: String, callerSessionID: String, ownSessionOnly: Bool, now: Int64, origin: EventOrigin
    ) async throws -> Bool? {
        let logger = logger
        return try await onLiveCaller(sessionID: callerSessionID, now: now, origin: origin) {
            caller, batch, connection in
            guard
                let row = try await connection.first(
                    """
                    DELETE FROM devices WHERE id = \(deviceID) AND profile_id = \(caller.profileID)
                        AND (NOT \(ownSessionOnly) OR session_id = \(callerSessionID))
                    RETURNING session_id
                    """, logger: logger)
            else { return false }
            batch.append(
                .deviceRemoved(deviceID: deviceID, profileID: caller.profileID, sessionID: try row.text(0)))
            return true
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

    public func eraseProfile(projectID: String, profileID: String, now: Int64, origin: EventOrigin) async throws
        -> Bool
    {
        let logger = logger
        // The row as the lock found it: a profile merged meanwhile is erased as its survivor (with
        // the merged one's alias), one erased meanwhile is not found, and the event carries the
        // external ID a promote committed while this waited.
        let erased: Void? = try await onLockedProfile(
            projectID: projectID, profileID: profileID, now: now, origin: origin
        ) { profile, batch, connection in
            let aliases = try await connection.rows(
                "SELECT alias_id FROM profile_aliases WHERE profile_id = \(profile.id) ORDER BY created_at, alias_id",
                logger: logger
            ).map { try $0.text(0) }
            try await Self.write(
                ProfileAdminProcedure.erase(profile, aliases: aliases), on: profile, now: now, batch: &batch,
                in: connection, logger: logger)
        }
        return erased != nil
    }

    // MARK: Cleanup

    /// Deletes up to `batchSize` expired sessions (with their devices) and used token IDs, skipping
    /// rows another node is deleting right now (`FOR UPDATE SKIP LOCKED`), so nodes can clean at once.
    public func deleteExpired(now: Int64, batchSize: Int) async throws -> CleanupCounts {
        let logger = logger
        let limit = Int64(batchSize)
        let ended = try await transaction { connection in
            let victims = try await connection.rows(
                """
                SELECT id, project_id, profile_id, revoked_at FROM sessions WHERE expires_at <= \(now)
                ORDER BY expires_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
                """, logger: logger
            ).map {
                (
                    id: try $0.text(0), projectID: try $0.text(1), profileID: try $0.text(2),
                    revoked: try $0.optionalInt(3) != nil
                )
            }
            let ids = victims.map(\.id)
            let devices = try await Self.deleteDevices(ofSessions: ids, in: connection, logger: logger)
            try await connection.rows("DELETE FROM sessions WHERE id = ANY(\(ids))", logger: logger)
            for batch in EventBatch.expired(victims, devices: devices, now: now) {
                try await Self.append(batch, in: connection, logger: logger)
            }
            return (sessions: victims.count, devices: devices.count)
        }
        var counts = try await statement { client in
            var counts = CleanupCounts()
            counts.sessions = ended.sessions
            counts.devices = ended.devices
            counts.tokenIDs = try await Self.deleteExpiredRows(
                from: "used_token_ids", key: ["project_id", "jti"], now: now, limit: limit, in: client, logger: logger)
            counts.dpopProofs = try await Self.deleteExpiredRows(
                from: "used_dpop_proofs", key: ["jkt", "jti"], now: now, limit: limit, in: client, logger: logger)
            counts.appAttestChallenges = try await Self.deleteExpiredRows(
                from: "app_attest_challenges", key: ["challenge_hash"], now: now, limit: limit, in: client,
                logger: logger)
            return counts
        }
        (counts.operatorSessions, counts.operatorEnrollments) = try await deleteExpiredOperatorRows(
            now: now, batchSize: batchSize)
        return counts
    }

    /// Deletes up to `limit` rows of `table` (one with an `expires_at`, its primary key `key`) that
    /// expired by `now`, the oldest first, skipping rows another node is deleting right now (`FOR
    /// UPDATE SKIP LOCKED`), so nodes can clean at once; answers how many.
    static func deleteExpiredRows(
        from table: String, key: [String], now: Int64, limit: Int64, in client: PostgresClient, logger: Logger
    ) async throws -> Int {
        let columns = key.joined(separator: ", ")
        let match = key.map { "t.\($0) = v.\($0)" }.joined(separator: " AND ")
        return Int(
            try await client.first(
                """
                WITH victims AS (
                    SELECT \(unescaped: columns) FROM \(unescaped: table) WHERE expires_at <= \(now) ORDER BY expires_at
                    LIMIT \(limit) FOR UPDATE SKIP LOCKED
                ), gone AS (
                    DELETE FROM \(unescaped: table) t USING victims v WHERE \(unescaped: match) RETURNING 1
                )
                SELECT COUNT(*) FROM gone
                """, logger: logger)?.int(0) ?? 0)
    }
}
