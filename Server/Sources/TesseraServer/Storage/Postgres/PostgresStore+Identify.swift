import PostgresNIO

extension PostgresStore {
    public func identify(_ command: IdentifyCommand) async throws -> IdentifyResult {
        let logger = logger
        return try await transaction { connection in
            if let tokenID = command.tokenID {
                // A concurrent use of the same jti waits for this row and then finds it taken.
                let inserted = try await connection.rows(
                    """
                    INSERT INTO used_token_ids (project_id, jti, expires_at)
                    VALUES (\(command.projectID), \(tokenID.value), \(tokenID.expiresAt))
                    ON CONFLICT DO NOTHING RETURNING jti
                    """, logger: logger)
                guard !inserted.isEmpty else {
                    throw CoreError.identityTokenReplayed
                }
            }
            // Decided on the rows as locked, never on a read before the lock.
            let (caller, existing) = try await Self.lockIdentifyTargets(command, in: connection, logger: logger)
            let procedure = try IdentifyProcedure.make(command, caller: caller, existing: existing)
            var batch = EventBatch(projectID: command.projectID, origin: command.origin, now: command.now)
            var profile: ProfileRecord?
            for step in procedure.steps {
                profile =
                    try await Self.write(step, now: command.now, batch: &batch, in: connection, logger: logger)
                    ?? profile
            }
            guard let profile else { throw PostgresFailureVanished() }
            try await Self.append(batch, in: connection, logger: logger)
            return procedure.result(profile: profile)
        }
    }

    /// Writes one step of an identify in PostgreSQL's SQL; answers the profile a step reads back.
    private static func write(
        _ step: IdentifyStep, now: Int64, batch: inout EventBatch, in connection: PostgresConnection, logger: Logger
    ) async throws -> ProfileRecord? {
        switch step {
        case .insertProfile(let profile):
            // Two nodes creating the same user race on profiles_external_id; the loser runs again
            // and signs in to the winner's profile.
            try await insert(profile: profile, into: connection, logger: logger)
        case .promoteProfile(let id, let externalID, let verified):
            try await connection.rows(
                """
                UPDATE profiles SET kind = 'identified', external_id = \(externalID),
                    verified = \(verified), updated_at = \(now)
                WHERE id = \(id)
                """, logger: logger)
            try await connection.rows(
                "UPDATE installations SET previous_profile_id = profile_id, profile_id = NULL WHERE profile_id = \(id)",
                logger: logger)
        case .endProfileSessions(let profileID):
            try await endProfileSessions(profileID, now: now, batch: &batch, in: connection, logger: logger)
        case .endSession(let id):
            try await endSessions(
                "UPDATE sessions SET revoked_at = \(now) WHERE id = \(id) AND revoked_at IS NULL RETURNING id, profile_id",
                reason: .replaced,
                devices: "DELETE FROM devices WHERE session_id = \(id) RETURNING id, profile_id, session_id",
                batch: &batch, in: connection, logger: logger)
        case .fold(let source, let target, let projectID):
            try await fold(
                source, into: target, projectID: projectID, now: now, batch: &batch, in: connection, logger: logger)
        case .recordSecretUse(let projectID, let kid):
            try await connection.rows(
                """
                UPDATE identity_secrets SET last_used_at = GREATEST(COALESCE(last_used_at, 0), \(now))
                WHERE project_id = \(projectID) AND kid = \(kid)
                """, logger: logger)
        case .updateClaims(let profileID, let name, let avatarURL, let email):
            return try await connection.first(
                """
                UPDATE profiles SET name = COALESCE(\(name), name), avatar_url = COALESCE(\(avatarURL), avatar_url),
                    email = COALESCE(\(email), email), updated_at = \(now)
                WHERE id = \(profileID)
                RETURNING \(unescaped: profileColumns)
                """, logger: logger
            ).map(profile)
        case .evictSessions(let profileID, let limit):
            try await evictSessions(
                profileID: profileID, limit: limit, now: now, batch: &batch, in: connection, logger: logger)
        case .insertSession(let session, let tokenHash):
            try await insert(session: session, tokenHash: tokenHash, into: connection, logger: logger)
        case .rememberKey(let session, let jkt):
            if try await connection.first(
                """
                INSERT INTO profile_keys (profile_id, jkt, created_at) VALUES (\(session.profileID), \(jkt), \(now))
                ON CONFLICT DO NOTHING RETURNING 1
                """, logger: logger) != nil
            {
                batch.append(.profileNewKey(session, jkt: jkt))
            }
        case .event(let draft):
            batch.append(draft)
        }
        return nil
    }
}
