import TesseraTokens

extension SQLiteStore {
    public func startAnonymousSession(_ request: AnonymousStart) async throws -> AnonymousStartResult {
        try await writer.write { connection in
            let now = request.newSession.createdAt
            var hits: Int64?
            if let charge = request.rateLimit {
                // Counted first; a refused start rolls back with its hit (the writer's savepoint).
                hits = try Self.hit(charge.key, window: charge.window, in: connection)
                if hits! > charge.limit { throw charge.exceeded(now: now) }
            }
            // Read in the one writer's transaction that acts on them.
            let installation = try connection.queryFirst(
                "SELECT secret_hash, profile_id FROM installations WHERE project_id = ? AND installation_id = ?",
                [.init(request.projectID), .init(request.installationID)])
            var current: ProfileRecord?
            if let profileID = installation?.optionalText(1) {
                current = try connection.queryFirst(
                    "SELECT \(Self.profileColumns) FROM profiles WHERE id = ?", [.init(profileID)]
                ).map { Self.profile($0) }
            }
            let procedure = try AnonymousStartProcedure.make(
                request, storedSecretHash: installation?.blob(0), current: current)
            var batch = EventBatch(projectID: request.projectID, origin: request.origin, now: now)
            for step in procedure.steps {
                try Self.write(step, request, now: now, batch: &batch, in: connection)
            }
            try Self.append(batch, in: connection)
            return AnonymousStartResult(
                createdInstallation: procedure.createdInstallation, context: procedure.context, rateLimitHits: hits)
        }
    }

    /// Writes one step of an anonymous start in SQLite's SQL.
    private static func write(
        _ step: AnonymousStartStep, _ request: AnonymousStart, now: Int64, batch: inout EventBatch,
        in connection: SQLiteConnection
    ) throws {
        switch step {
        case .insertProfile(let profile):
            try insert(profile: profile, into: connection)
        case .insertInstallation(let profileID):
            try connection.run(
                """
                INSERT INTO installations (project_id, installation_id, secret_hash, profile_id, created_at)
                VALUES (?, ?, ?, ?, ?)
                """,
                [
                    .init(request.projectID), .init(request.installationID), .init(request.installationSecretHash),
                    .init(profileID), .init(now),
                ])
        case .attachInstallation(let profileID):
            try connection.run(
                "UPDATE installations SET profile_id = ? WHERE project_id = ? AND installation_id = ?",
                [.init(profileID), .init(request.projectID), .init(request.installationID)])
        case .endOtherKeySessions(let profileID, let jkt):
            let (condition, bindings): (String, [SQLiteValue]) = (
                "profile_id = ? AND installation_id = ? AND jkt IS NOT NULL AND jkt <> ? AND expires_at > ?",
                [.init(profileID), .init(request.installationID), .init(jkt), .init(now)]
            )
            try endSessions(
                where: condition, bindings, reason: .replaced, now: now,
                devicesWhere: "session_id IN (SELECT id FROM sessions WHERE \(condition))", bindings,
                batch: &batch, in: connection)
        case .evictSessions(let profileID, let limit):
            try evictSessions(profileID: profileID, limit: limit, now: now, batch: &batch, in: connection)
        case .insertSession(let session, let tokenHash):
            try insert(session: session, tokenHash: tokenHash, into: connection)
        case .event(let draft):
            batch.append(draft)
        }
    }

    /// Ends the live sessions of a profile beyond the `limit - 1` most recently authenticated
    /// (`session.ended`, reason `evicted`), with their devices, to make room for a new one; nothing
    /// without a limit.
    static func evictSessions(
        profileID: String, limit: Int64?, now: Int64, batch: inout EventBatch, in connection: SQLiteConnection
    ) throws {
        guard let limit else { return }
        let ids = try connection.query(
            """
            SELECT id FROM sessions WHERE profile_id = ? AND revoked_at IS NULL AND expires_at > ?
            ORDER BY last_authenticated_at DESC, created_at DESC, id DESC LIMIT -1 OFFSET ?
            """,
            [.init(profileID), .init(now), .init(max(limit - 1, 0))]
        ).map { SQLiteValue($0.text(0)) }
        guard !ids.isEmpty else { return }
        let marks = Array(repeating: "?", count: ids.count).joined(separator: ", ")
        try endSessions(
            where: "id IN (\(marks))", ids, reason: .evicted, now: now, devicesWhere: "session_id IN (\(marks))", ids,
            batch: &batch, in: connection)
    }

    /// Ends every live session of a profile (`replaced`) with their devices.
    static func endProfileSessions(
        _ profileID: String, now: Int64, batch: inout EventBatch, in connection: SQLiteConnection
    ) throws {
        try endSessions(
            where: "profile_id = ?", [.init(profileID)], reason: .replaced, now: now,
            devicesWhere: "session_id IN (SELECT id FROM sessions WHERE profile_id = ?)", [.init(profileID)],
            batch: &batch, in: connection)
    }

    /// Folds profile `source` into `target`: its aliases move, it becomes an alias, and it is deleted
    /// with its sessions and their devices.
    static func fold(
        _ source: String, into target: String, projectID: String, now: Int64, batch: inout EventBatch,
        in connection: SQLiteConnection
    ) throws {
        // The installations remember the profile they now lead to (support's lookup by installation ID).
        try connection.run(
            "UPDATE installations SET previous_profile_id = ?, profile_id = NULL WHERE profile_id = ?",
            [.init(target), .init(source)])
        try connection.run(
            "UPDATE installations SET previous_profile_id = ? WHERE previous_profile_id = ?",
            [.init(target), .init(source)])
        try connection.run(
            "UPDATE profile_aliases SET profile_id = ? WHERE profile_id = ?", [.init(target), .init(source)])
        try connection.run(
            "INSERT INTO profile_aliases (alias_id, project_id, profile_id, created_at) VALUES (?, ?, ?, ?)",
            [.init(source), .init(projectID), .init(target), .init(now)])
        // The folded profile's sessions (`replaced`, the caller's included) and their devices go with it.
        try endProfileSessions(source, now: now, batch: &batch, in: connection)
        try connection.run("DELETE FROM profiles WHERE id = ?", [.init(source)])
        let externalID = try connection.queryFirst(
            "SELECT external_id FROM profiles WHERE id = ?", [.init(target)])?.optionalText(0)
        let aliases = try connection.query(
            "SELECT alias_id FROM profile_aliases WHERE profile_id = ? ORDER BY created_at, alias_id",
            [.init(target)]
        ).map { $0.text(0) }
        batch.append(.profileMerged(profileID: target, from: source, externalID: externalID, aliasIDs: aliases))
    }

    public func sessionContext(tokenHash: [UInt8]) async throws -> SessionContext? {
        try readContext(tokenHash: tokenHash)
    }

    public func sessionContextWithoutSuspending(tokenHash: [UInt8]) throws -> SessionContext?? {
        .some(try readContext(tokenHash: tokenHash))
    }

    private func readContext(tokenHash: [UInt8]) throws -> SessionContext? {
        try readers.read {
            try $0.queryFirst(
                Self.contextByTokenHashSQL,
                [.init(tokenHash)]
            ).map(Self.context)
        }
    }

    public func sessionContext(sessionID: String) async throws -> SessionContext? {
        try readers.read {
            try $0.queryFirst(
                Self.contextByIDSQL,
                [.init(sessionID)]
            ).map(Self.context)
        }
    }

    public func extendSession(sessionID: String, expiresAt: Int64, now: Int64) async throws -> SessionContext? {
        try await writer.write { connection in
            let changed = try connection.run(
                """
                UPDATE sessions SET expires_at = MAX(expires_at, ?), last_authenticated_at = ?
                WHERE id = ? AND revoked_at IS NULL AND expires_at > ?
                """,
                [.init(expiresAt), .init(now), .init(sessionID), .init(now)])
            guard changed == 1 else { return nil }
            return try connection.queryFirst(
                Self.contextByIDSQL,
                [.init(sessionID)]
            ).map(Self.context)
        }
    }

    public func revokeSession(
        sessionID: String, profileID: String?, now: Int64, reason: SessionEndReason, origin: EventOrigin
    ) async throws -> Bool {
        try await writer.write { connection in
            guard
                let project = try connection.queryFirst(
                    """
                    SELECT project_id FROM sessions
                    WHERE id = ? AND (? IS NULL OR profile_id = ?) AND revoked_at IS NULL AND expires_at > ?
                    """,
                    [.init(sessionID), .init(profileID), .init(profileID), .init(now)])?.text(0)
            else { return false }
            var batch = EventBatch(projectID: project, origin: origin, now: now)
            try Self.endSessions(
                where: "id = ?", [.init(sessionID)], reason: reason, now: now,
                devicesWhere: "session_id = ?", [.init(sessionID)], batch: &batch, in: connection)
            try Self.append(batch, in: connection)
            return true
        }
    }

    public func revokeSession(
        sessionID: String, callerSessionID: String, now: Int64, reason: SessionEndReason, origin: EventOrigin
    ) async throws -> Bool? {
        try await onLiveCaller(sessionID: callerSessionID, now: now, origin: origin) { caller, batch, connection in
            guard
                try connection.queryFirst(
                    """
                    SELECT 1 FROM sessions
                    WHERE id = ? AND profile_id = ? AND revoked_at IS NULL AND expires_at > ?
                    """,
                    [.init(sessionID), .init(caller.profileID), .init(now)]) != nil
            else { return false }
            try Self.endSessions(
                where: "id = ?", [.init(sessionID)], reason: reason, now: now,
                devicesWhere: "session_id = ?", [.init(sessionID)], batch: &batch, in: connection)
            return true
        }
    }

    /// Runs `body` in one write transaction for the caller's session `sessionID` while it is alive
    /// at `now`, with the caller's profile as that transaction found it, then writes the events
    /// `body` added to the batch; nil, with nothing written, when the caller's session is not alive
    /// (another request ended it since authentication). PostgreSQL's `onLiveCaller` locks the same.
    func onLiveCaller<T: Sendable>(
        sessionID: String, now: Int64, origin: EventOrigin,
        _ body:
            @escaping @Sendable (_ caller: (projectID: String, profileID: String), inout EventBatch, SQLiteConnection)
            throws -> T
    ) async throws -> T? {
        try await writer.write { connection in
            guard
                let caller = try connection.queryFirst(
                    "SELECT project_id, profile_id FROM sessions WHERE id = ? AND revoked_at IS NULL AND expires_at > ?",
                    [.init(sessionID), .init(now)]
                ).map({ (projectID: $0.text(0), profileID: $0.text(1)) })
            else { return nil }
            var batch = EventBatch(projectID: caller.projectID, origin: origin, now: now)
            let result = try body(caller, &batch, connection)
            try Self.append(batch, in: connection)
            return result
        }
    }

    public func revokeSessions(projectID: String, profileID: String, now: Int64, origin: EventOrigin) async throws
        -> Int?
    {
        // Resolved in the write transaction: what an erasure or a merge ended before it is not
        // counted as ended by this request.
        try await onLockedProfile(projectID: projectID, profileID: profileID, now: now, origin: origin) {
            profile, batch, connection in
            try Self.write(ProfileAdminProcedure.endSessions, on: profile, now: now, batch: &batch, in: connection)
                .ended
        }
    }

    public func revokeOtherSessions(sessionID: String, now: Int64, origin: EventOrigin) async throws -> Int? {
        try await onLiveCaller(sessionID: sessionID, now: now, origin: origin) { caller, batch, connection in
            try Self.endSessions(
                where: "profile_id = ? AND id <> ? AND expires_at > ?",
                [.init(caller.profileID), .init(sessionID), .init(now)],
                reason: .revoked, now: now,
                devicesWhere: "session_id IN (SELECT id FROM sessions WHERE profile_id = ? AND id <> ?)",
                [.init(caller.profileID), .init(sessionID)], batch: &batch, in: connection)
        }
    }

    public func liveSessions(profileID: String, now: Int64) async throws -> [SessionRecord] {
        try readers.read {
            try $0.query(
                """
                SELECT \(Self.sessionColumns) FROM sessions
                WHERE profile_id = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY created_at, id
                """,
                [.init(profileID), .init(now)]
            ).map { Self.session($0) }
        }
    }

    public func newestLiveSessions(profileID: String, now: Int64, limit: Int) async throws -> (
        sessions: [SessionRecord], count: Int
    ) {
        // Newest first by rowid (insertion order), which the profile index holds: no sort of a
        // profile's thousands of sessions to show a hundred.
        try readers.snapshot { connection in
            let sessions = try connection.query(
                """
                SELECT \(Self.sessionColumns) FROM sessions
                WHERE profile_id = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY rowid DESC LIMIT ?
                """,
                [.init(profileID), .init(now), .init(limit)]
            ).map { Self.session($0) }
            let count =
                sessions.count < limit
                ? sessions.count
                : Int(
                    try connection.queryFirst(
                        "SELECT COUNT(*) FROM sessions WHERE profile_id = ? AND revoked_at IS NULL AND expires_at > ?",
                        [.init(profileID), .init(now)])?.int(0) ?? 0)
            return (sessions, count)
        }
    }
}
