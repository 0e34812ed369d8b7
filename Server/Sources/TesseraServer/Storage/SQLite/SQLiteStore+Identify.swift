extension SQLiteStore {
    public func identify(_ command: IdentifyCommand) async throws -> IdentifyResult {
        try await writer.write { connection in
            if let tokenID = command.tokenID {
                do {
                    try connection.run(
                        "INSERT INTO used_token_ids (project_id, jti, expires_at) VALUES (?, ?, ?)",
                        [.init(command.projectID), .init(tokenID.value), .init(tokenID.expiresAt)])
                } catch let error as SQLiteError where error.isUniqueViolation {
                    throw CoreError.identityTokenReplayed
                }
            }
            // Read in the one writer's transaction that acts on them.
            var caller: SessionContext?
            if let callerSessionID = command.callerSessionID {
                let row = try connection.queryFirst(Self.contextByIDSQL, [.init(callerSessionID)])
                guard let context = row.map(Self.context) else { throw CoreError.sessionNotFound }
                caller = context
            }
            let existing = try connection.queryFirst(
                """
                SELECT \(Self.profileColumns) FROM profiles
                WHERE project_id = ? AND verified = ? AND external_id = ?
                """,
                [.init(command.projectID), .init(command.verified), .init(command.externalID)]
            ).map { Self.profile($0) }
            let procedure = try IdentifyProcedure.make(command, caller: caller, existing: existing)
            var batch = EventBatch(projectID: command.projectID, origin: command.origin, now: command.now)
            var profile: ProfileRecord?
            for step in procedure.steps {
                profile = try Self.write(step, now: command.now, batch: &batch, in: connection) ?? profile
            }
            guard let profile else { throw SQLiteError(code: 1, message: "profile vanished") }
            try Self.append(batch, in: connection)
            return procedure.result(profile: profile)
        }
    }

    /// Writes one step of an identify in SQLite's SQL; answers the profile a step reads back.
    private static func write(
        _ step: IdentifyStep, now: Int64, batch: inout EventBatch, in connection: SQLiteConnection
    ) throws -> ProfileRecord? {
        switch step {
        case .insertProfile(let profile):
            try insert(profile: profile, into: connection)
        case .promoteProfile(let id, let externalID, let verified):
            try connection.run(
                "UPDATE profiles SET kind = 'identified', external_id = ?, verified = ?, updated_at = ? WHERE id = ?",
                [.init(externalID), .init(verified), .init(now), .init(id)])
            try connection.run(
                "UPDATE installations SET previous_profile_id = profile_id, profile_id = NULL WHERE profile_id = ?",
                [.init(id)])
        case .endProfileSessions(let profileID):
            try endProfileSessions(profileID, now: now, batch: &batch, in: connection)
        case .endSession(let id):
            try endSessions(
                where: "id = ?", [.init(id)], reason: .replaced, now: now, devicesWhere: "session_id = ?", [.init(id)],
                batch: &batch, in: connection)
        case .fold(let source, let target, let projectID):
            try fold(source, into: target, projectID: projectID, now: now, batch: &batch, in: connection)
        case .recordSecretUse(let projectID, let kid):
            try connection.run(
                """
                UPDATE identity_secrets SET last_used_at = MAX(COALESCE(last_used_at, 0), ?)
                WHERE project_id = ? AND kid = ?
                """,
                [.init(now), .init(projectID), .init(kid)])
        case .updateClaims(let profileID, let name, let avatarURL, let email):
            try connection.run(
                """
                UPDATE profiles SET name = COALESCE(?, name), avatar_url = COALESCE(?, avatar_url),
                    email = COALESCE(?, email), updated_at = ?
                WHERE id = ?
                """,
                [.init(name), .init(avatarURL), .init(email), .init(now), .init(profileID)])
            return try connection.queryFirst("SELECT \(profileColumns) FROM profiles WHERE id = ?", [.init(profileID)])
                .map { profile($0) }
        case .evictSessions(let profileID, let limit):
            try evictSessions(profileID: profileID, limit: limit, now: now, batch: &batch, in: connection)
        case .insertSession(let session, let tokenHash):
            try insert(session: session, tokenHash: tokenHash, into: connection)
        case .rememberKey(let session, let jkt):
            if try connection.run(
                "INSERT OR IGNORE INTO profile_keys (profile_id, jkt, created_at) VALUES (?, ?, ?)",
                [.init(session.profileID), .init(jkt), .init(now)]) == 1
            {
                batch.append(.profileNewKey(session, jkt: jkt))
            }
        case .event(let draft):
            batch.append(draft)
        }
        return nil
    }
}
