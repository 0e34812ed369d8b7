import PostgresNIO

extension PostgresStore {
    /// Translates an admin procedure's steps on `profile` (locked FOR UPDATE by `onLockedProfile`)
    /// to SQL, in order.
    @discardableResult
    static func write(
        _ steps: [ProfileAdminStep], on profile: ProfileRecord, now: Int64, batch: inout EventBatch,
        in connection: PostgresConnection, logger: Logger
    ) async throws -> ProfileAdminOutcome {
        var outcome = ProfileAdminOutcome()
        for step in steps {
            switch step {
            case .block(let reason):
                // The profile's row lock makes an identify or anonymous restore of it wait for this
                // transaction or finish before it (both lock the profile first); the statements after
                // this one run with a new snapshot, so they end the session such a restore committed.
                // An identify that comes later finds the profile blocked.
                outcome.profile = try await connection.first(
                    """
                    UPDATE profiles SET blocked_at = COALESCE(blocked_at, \(now)), blocked_reason = \(reason)
                    WHERE id = \(profile.id)
                    RETURNING \(unescaped: profileColumns)
                    """, logger: logger
                ).map(Self.profile)
            case .unblock:
                outcome.profile = try await connection.first(
                    """
                    UPDATE profiles SET blocked_at = NULL, blocked_reason = NULL WHERE id = \(profile.id)
                    RETURNING \(unescaped: profileColumns)
                    """, logger: logger
                ).map(Self.profile)
            case .endSessions(let reason, let includingExpired, let profileDevices):
                let devices: PostgresQuery =
                    profileDevices
                    ? """
                    DELETE FROM devices
                    WHERE profile_id = \(profile.id) OR session_id IN (SELECT id FROM sessions WHERE profile_id = \(profile.id))
                    RETURNING id, profile_id, session_id
                    """
                    : """
                    DELETE FROM devices WHERE session_id IN (SELECT id FROM sessions WHERE profile_id = \(profile.id))
                    RETURNING id, profile_id, session_id
                    """
                outcome.ended += try await endSessions(
                    """
                    UPDATE sessions SET revoked_at = \(now)
                    WHERE profile_id = \(profile.id) AND revoked_at IS NULL AND (\(includingExpired) OR expires_at > \(now))
                    RETURNING id, profile_id
                    """, reason: reason, devices: devices, batch: &batch, in: connection, logger: logger)
            case .scrub(let profileIDs):
                try await scrubEvents(
                    projectID: profile.projectID, profileIDs: profileIDs, in: connection, logger: logger)
                try await anonymiseActivity(
                    projectID: profile.projectID, profileIDs: profileIDs, in: connection, logger: logger)
            case .delete:
                try await connection.rows("DELETE FROM sessions WHERE profile_id = \(profile.id)", logger: logger)
                try await connection.rows(
                    "DELETE FROM profile_aliases WHERE profile_id = \(profile.id)", logger: logger)
                try await connection.rows(
                    "UPDATE installations SET profile_id = NULL WHERE profile_id = \(profile.id)", logger: logger)
                try await connection.rows(
                    "UPDATE installations SET previous_profile_id = NULL WHERE previous_profile_id = \(profile.id)",
                    logger: logger)
                try await connection.rows("DELETE FROM profiles WHERE id = \(profile.id)", logger: logger)
            case .event(let draft):
                batch.append(draft)
            }
        }
        return outcome
    }
}
