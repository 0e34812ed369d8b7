import PostgresNIO
import TesseraTokens

extension PostgresStore {
    public func startAnonymousSession(_ request: AnonymousStart) async throws -> AnonymousStartResult {
        let logger = logger
        return try await transaction { connection in
            let now = request.newSession.createdAt
            // Locks in the order every path takes: the profile, then its installation (an erasure, a
            // block or an identify of the profile holds the profile first). The installation is read,
            // its profile locked FOR SHARE (a block waits for this start, then ends its session), then
            // the installation row locked and checked to still point there; a concurrent first start
            // loses on the primary key and runs again, then restores the winner's profile.
            // With a session limit the profile is locked FOR UPDATE: two starts of one profile count
            // and evict its sessions one after the other.
            let (existing, current) = try await Self.lockInstallation(
                projectID: request.projectID, installationID: request.installationID,
                profileLock: request.maxSessionsPerProfile == nil ? .share : .update, in: connection, logger: logger)
            let procedure = try AnonymousStartProcedure.make(
                request, storedSecretHash: try existing?.bytes(0), current: current)
            var batch = EventBatch(projectID: request.projectID, origin: request.origin, now: now)
            for step in procedure.steps {
                try await Self.write(step, request, now: now, batch: &batch, in: connection, logger: logger)
            }
            var hits: Int64?
            if let charge = request.rateLimit {
                // Counted in the start's own transaction, last, so the counter's row stays locked only
                // until the commit; a refused start rolls back with its hit.
                hits = try await Self.hit(charge.key, window: charge.window, in: connection, logger: logger)
                if hits! > charge.limit { throw charge.exceeded(now: now) }
            }
            try await Self.append(batch, in: connection, logger: logger)
            return AnonymousStartResult(
                createdInstallation: procedure.createdInstallation, context: procedure.context, rateLimitHits: hits)
        }
    }

    /// Writes one step of an anonymous start in PostgreSQL's SQL.
    private static func write(
        _ step: AnonymousStartStep, _ request: AnonymousStart, now: Int64, batch: inout EventBatch,
        in connection: PostgresConnection, logger: Logger
    ) async throws {
        switch step {
        case .insertProfile(let profile):
            try await insert(profile: profile, into: connection, logger: logger)
        case .insertInstallation(let profileID):
            try await connection.rows(
                """
                INSERT INTO installations (project_id, installation_id, secret_hash, profile_id, created_at)
                VALUES (\(request.projectID), \(request.installationID),
                    \(request.installationSecretHash.bytea), \(profileID), \(now))
                """, logger: logger)
        case .attachInstallation(let profileID):
            try await connection.rows(
                """
                UPDATE installations SET profile_id = \(profileID)
                WHERE project_id = \(request.projectID) AND installation_id = \(request.installationID)
                """, logger: logger)
        case .endOtherKeySessions(let profileID, let jkt):
            // The UPDATE decides on each session row as it locks it.
            try await endSessions(
                """
                UPDATE sessions SET revoked_at = \(now)
                WHERE profile_id = \(profileID) AND installation_id = \(request.installationID)
                  AND jkt IS NOT NULL AND jkt <> \(jkt) AND revoked_at IS NULL AND expires_at > \(now)
                RETURNING id, profile_id
                """, reason: .replaced, batch: &batch, in: connection, logger: logger)
        case .evictSessions(let profileID, let limit):
            try await evictSessions(
                profileID: profileID, limit: limit, now: now, batch: &batch, in: connection, logger: logger)
        case .insertSession(let session, let tokenHash):
            try await insert(session: session, tokenHash: tokenHash, into: connection, logger: logger)
        case .event(let draft):
            batch.append(draft)
        }
    }

    public func sessionContext(tokenHash: [UInt8]) async throws -> SessionContext? {
        try await contextsByTokenHash.load(tokenHash)
    }

    public func sessionContext(sessionID: String) async throws -> SessionContext? {
        try await contextsByID.load(sessionID)
    }

    public func extendSession(sessionID: String, expiresAt: Int64, now: Int64) async throws -> SessionContext? {
        let logger = logger
        return try await statement { client in
            try await client.first(
                """
                WITH s AS (
                    UPDATE sessions SET expires_at = GREATEST(expires_at, \(expiresAt)), last_authenticated_at = \(now)
                    WHERE id = \(sessionID) AND revoked_at IS NULL AND expires_at > \(now)
                    RETURNING *
                )
                SELECT \(unescaped: Self.contextColumns) FROM s JOIN profiles p ON p.id = s.profile_id
                """, logger: logger
            ).map(Self.context)
        }
    }

    public func revokeSession(
        sessionID: String, profileID: String?, now: Int64, reason: SessionEndReason, origin: EventOrigin
    ) async throws -> Bool {
        let logger = logger
        return try await transaction { connection in
            let revoked = try await connection.rows(
                """
                UPDATE sessions SET revoked_at = \(now)
                WHERE id = \(sessionID) AND (\(profileID)::text IS NULL OR profile_id = \(profileID))
                    AND revoked_at IS NULL AND expires_at > \(now)
                RETURNING id, profile_id, project_id
                """, logger: logger)
            guard let row = revoked.first else { return false }
            var batch = EventBatch(projectID: try row.text(2), origin: origin, now: now)
            // A statement of its own, so its snapshot includes a device whose registration held the
            // session's row lock (FOR SHARE) and committed while the UPDATE waited for it.
            let devices = try await Self.deleteDevices(ofSessions: [sessionID], in: connection, logger: logger)
            batch.ended(sessions: [(sessionID, try row.text(1))], devices: devices, reason: reason)
            try await Self.append(batch, in: connection, logger: logger)
            return true
        }
    }

    public func revokeSession(
        sessionID: String, callerSessionID: String, now: Int64, reason: SessionEndReason, origin: EventOrigin
    ) async throws -> Bool? {
        let logger = logger
        return try await onLiveCaller(sessionID: callerSessionID, also: sessionID, now: now, origin: origin) {
            caller, batch, connection in
            guard caller.live.contains(sessionID) else { return false }
            try await Self.endSessions(
                "UPDATE sessions SET revoked_at = \(now) WHERE id = \(sessionID) RETURNING id, profile_id",
                reason: reason, batch: &batch, in: connection, logger: logger)
            return true
        }
    }

    /// Runs `body` in one transaction for the caller's session `sessionID` while it is alive under
    /// its lock (``lockCaller(sessionID:also:now:in:logger:)``: the profile, then the session and
    /// `other`), then writes the events `body` added to the batch; nil, with nothing written, when
    /// the caller's session is not alive (another request ended it since authentication).
    func onLiveCaller<T: Sendable>(
        sessionID: String, also other: String? = nil, now: Int64, origin: EventOrigin,
        _ body:
            @escaping @Sendable (
                _ caller: (projectID: String, profileID: String, live: Set<String>), inout EventBatch,
                PostgresConnection
            ) async throws -> T
    ) async throws -> T? {
        let logger = logger
        return try await transaction { connection in
            guard
                let caller = try await Self.lockCaller(
                    sessionID: sessionID, also: other, now: now, in: connection, logger: logger)
            else { return nil }
            var batch = EventBatch(projectID: caller.projectID, origin: origin, now: now)
            let result = try await body(caller, &batch, connection)
            try await Self.append(batch, in: connection, logger: logger)
            return result
        }
    }

    /// Locks the profile of the session `sessionID`, then that session and `other` (one of the same
    /// profile) in ID order, as every path locks them; nil when the caller's session is not alive
    /// under its lock. Answers which of the two are alive: a session never changes profile, so a
    /// profile gone under its lock took the caller's session with it.
    static func lockCaller(
        sessionID: String, also other: String?, now: Int64, in connection: PostgresConnection, logger: Logger
    ) async throws -> (projectID: String, profileID: String, live: Set<String>)? {
        guard
            let seen = try await connection.first(
                "SELECT project_id, profile_id FROM sessions WHERE id = \(sessionID)", logger: logger)
        else { return nil }
        let projectID = try seen.text(0)
        guard
            let profile = try await lockProfile(
                projectID: projectID, id: try seen.text(1), .update, in: connection, logger: logger)
        else { return nil }
        let ids = [sessionID] + (other.map { [$0] } ?? [])
        let live = Set(
            try await connection.rows(
                """
                SELECT id FROM sessions WHERE id = ANY(\(ids)) AND profile_id = \(profile.id)
                    AND revoked_at IS NULL AND expires_at > \(now)
                ORDER BY id FOR UPDATE
                """, logger: logger
            ).map { try $0.text(0) })
        guard live.contains(sessionID) else { return nil }
        return (projectID, profile.id, live)
    }

    public func revokeSessions(projectID: String, profileID: String, now: Int64, origin: EventOrigin) async throws
        -> Int?
    {
        let logger = logger
        // Resolved and locked here, not by the caller before: sessions an erasure or a merge ended
        // while this waited are not counted as ended by this request.
        return try await onLockedProfile(projectID: projectID, profileID: profileID, now: now, origin: origin) {
            profile, batch, connection in
            try await Self.write(
                ProfileAdminProcedure.endSessions, on: profile, now: now, batch: &batch, in: connection, logger: logger
            ).ended
        }
    }

    public func revokeOtherSessions(sessionID: String, now: Int64, origin: EventOrigin) async throws -> Int? {
        let logger = logger
        // The profile first, then the caller's session, as every path locks them.
        return try await onLiveCaller(sessionID: sessionID, now: now, origin: origin) { caller, batch, connection in
            try await Self.endSessions(
                """
                UPDATE sessions SET revoked_at = \(now)
                WHERE profile_id = \(caller.profileID) AND id <> \(sessionID) AND revoked_at IS NULL AND expires_at > \(now)
                RETURNING id, profile_id
                """, reason: .revoked,
                devices: """
                    DELETE FROM devices WHERE session_id IN
                        (SELECT id FROM sessions WHERE profile_id = \(caller.profileID) AND id <> \(sessionID))
                    RETURNING id, profile_id, session_id
                    """, batch: &batch, in: connection, logger: logger)
        }
    }

    /// Ends the live sessions of a profile beyond the `limit - 1` most recently authenticated
    /// (`session.ended`, reason `evicted`), with their devices, to make room for a new one; nothing
    /// without a limit. The caller holds the profile's lock (FOR UPDATE).
    static func evictSessions(
        profileID: String, limit: Int64?, now: Int64, batch: inout EventBatch, in connection: PostgresConnection,
        logger: Logger
    ) async throws {
        guard let limit else { return }
        let keep = max(limit - 1, 0)
        try await endSessions(
            """
            UPDATE sessions SET revoked_at = \(now)
            WHERE id IN (
                SELECT id FROM sessions WHERE profile_id = \(profileID) AND revoked_at IS NULL AND expires_at > \(now)
                ORDER BY last_authenticated_at DESC, created_at DESC, id DESC OFFSET \(keep)
            ) AND revoked_at IS NULL
            RETURNING id, profile_id
            """, reason: .evicted, batch: &batch, in: connection, logger: logger)
    }

    public func liveSessions(profileID: String, now: Int64) async throws -> [SessionRecord] {
        let logger = logger
        return try await statement { client in
            try await client.rows(
                """
                SELECT \(unescaped: Self.sessionColumns) FROM sessions
                WHERE profile_id = \(profileID) AND revoked_at IS NULL AND expires_at > \(now)
                ORDER BY created_at, id
                """, logger: logger
            ).map(Self.session)
        }
    }

    public func newestLiveSessions(profileID: String, now: Int64, limit: Int) async throws -> (
        sessions: [SessionRecord], count: Int
    ) {
        let logger = logger
        let size = Int64(limit)
        let sessions = try await statement { client in
            try await client.rows(
                """
                SELECT \(unescaped: Self.sessionColumns) FROM sessions
                WHERE profile_id = \(profileID) AND revoked_at IS NULL AND expires_at > \(now)
                ORDER BY created_at DESC, id DESC LIMIT \(size)
                """, logger: logger
            ).map(Self.session)
        }
        guard sessions.count >= limit else { return (sessions, sessions.count) }
        let count = try await statement { client in
            try await client.rows(
                """
                SELECT COUNT(*) FROM sessions
                WHERE profile_id = \(profileID) AND revoked_at IS NULL AND expires_at > \(now)
                """, logger: logger
            ).first?.int(0) ?? 0
        }
        return (sessions, Int(count))
    }

    /// Ends every live session of a profile (`replaced`) with their devices: the UPDATE first, so
    /// a concurrent device registration (FOR SHARE on its session) is waited for or sees the revoke.
    static func endProfileSessions(
        _ profileID: String, now: Int64, batch: inout EventBatch, in connection: PostgresConnection, logger: Logger
    ) async throws {
        try await endSessions(
            """
            UPDATE sessions SET revoked_at = \(now) WHERE profile_id = \(profileID) AND revoked_at IS NULL
            RETURNING id, profile_id
            """, reason: .replaced,
            devices: """
                DELETE FROM devices WHERE session_id IN (SELECT id FROM sessions WHERE profile_id = \(profileID))
                RETURNING id, profile_id, session_id
                """, batch: &batch, in: connection, logger: logger)
    }

    /// Folds profile `source` into `target`: its aliases move, it becomes an alias, and it is deleted
    /// with its sessions and their devices (ON DELETE CASCADE).
    static func fold(
        _ source: String, into target: String, projectID: String, now: Int64, batch: inout EventBatch,
        in connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.rows(
            "UPDATE installations SET previous_profile_id = \(target), profile_id = NULL WHERE profile_id = \(source)",
            logger: logger)
        try await connection.rows(
            "UPDATE installations SET previous_profile_id = \(target) WHERE previous_profile_id = \(source)",
            logger: logger)
        try await connection.rows(
            "UPDATE profile_aliases SET profile_id = \(target) WHERE profile_id = \(source)", logger: logger)
        try await connection.rows(
            """
            INSERT INTO profile_aliases (alias_id, project_id, profile_id, created_at)
            VALUES (\(source), \(projectID), \(target), \(now))
            """, logger: logger)
        // Its sessions end (`replaced`, the caller's included) with their devices, then go with it.
        try await endProfileSessions(source, now: now, batch: &batch, in: connection, logger: logger)
        try await connection.rows("DELETE FROM profiles WHERE id = \(source)", logger: logger)
        let externalID = try await connection.first(
            "SELECT external_id FROM profiles WHERE id = \(target)", logger: logger)?.optionalText(0)
        let aliases = try await connection.rows(
            "SELECT alias_id FROM profile_aliases WHERE profile_id = \(target) ORDER BY created_at, alias_id",
            logger: logger
        ).map { try $0.text(0) }
        batch.append(.profileMerged(profileID: target, from: source, externalID: externalID, aliasIDs: aliases))
    }
}

extension PostgresStore {
    /// Locks what an identify acts on, profiles before sessions as every path does: the caller's
    /// profile and the profile that already holds the external ID, in one statement in ID order (two
    /// identifies that need the same two profiles never wait for each other crosswise), then the
    /// caller's session. Both are answered as the locks found them; a caller whose session is gone
    /// (its profile erased or merged meanwhile) is `session_not_found`.
    static func lockIdentifyTargets(_ command: IdentifyCommand, in connection: PostgresConnection, logger: Logger)
        async throws -> (caller: SessionContext?, existing: ProfileRecord?)
    {
        for _ in 0..<8 {
            var callerProfileID: String?
            if let callerSessionID = command.callerSessionID {
                guard
                    let row = try await connection.first(
                        "SELECT profile_id FROM sessions WHERE id = \(callerSessionID)", logger: logger)
                else { throw CoreError.sessionNotFound }
                callerProfileID = try row.text(0)
            }
            let profiles = try await connection.rows(
                """
                SELECT \(unescaped: profileColumns) FROM profiles
                WHERE (id = \(callerProfileID) AND project_id = \(command.projectID))
                    OR (project_id = \(command.projectID) AND verified = \(command.verified)
                        AND external_id = \(command.externalID))
                ORDER BY id FOR UPDATE
                """, logger: logger
            ).map(profile)
            let existing = profiles.first {
                $0.verified == command.verified
                    && $0.externalID.map { $0.utf8.elementsEqual(command.externalID.utf8) }
                        == true
            }
            guard let callerSessionID = command.callerSessionID, let callerProfileID else { return (nil, existing) }
            guard
                let session = try await connection.first(
                    "SELECT \(unescaped: sessionColumns) FROM sessions WHERE id = \(callerSessionID) FOR UPDATE",
                    logger: logger
                ).map(Self.session)
            else { throw CoreError.sessionNotFound }
            // A session never changes profile; its profile gone under the lock means the session went
            // with it, unless that happened between the two reads: then resolve again.
            guard session.profileID.utf8.elementsEqual(callerProfileID.utf8),
                let callerProfile = profiles.first(where: { $0.id.utf8.elementsEqual(callerProfileID.utf8) })
            else { continue }
            return (SessionContext(session: session, profile: callerProfile), existing)
        }
        throw PostgresFailureVanished()
    }

    /// Locks an installation's profile (`profileLock`: FOR SHARE unless the start evicts sessions) and
    /// then the installation row (FOR UPDATE), and answers the installation row (`secret_hash,
    /// profile_id`, nil when there is none) with its profile as locked (nil when it has none).
    static func lockInstallation(
        projectID: String, installationID: String, profileLock: ProfileLock = .share,
        in connection: PostgresConnection, logger: Logger
    ) async throws -> (installation: PostgresCells?, profile: ProfileRecord?) {
        for _ in 0..<8 {
            let seen = try await connection.first(
                """
                SELECT profile_id FROM installations
                WHERE project_id = \(projectID) AND installation_id = \(installationID)
                """, logger: logger)
            guard let seen else { return (nil, nil) }
            let profileID = try seen.optionalText(0)
            var profile: ProfileRecord?
            if let profileID {
                profile = try await connection.first(
                    """
                    SELECT \(unescaped: profileColumns) FROM profiles WHERE id = \(profileID)
                    \(unescaped: profileLock.rawValue)
                    """,
                    logger: logger
                ).map(Self.profile)
            }
            guard
                let installation = try await connection.first(
                    """
                    SELECT secret_hash, profile_id FROM installations
                    WHERE project_id = \(projectID) AND installation_id = \(installationID) FOR UPDATE
                    """, logger: logger)
            else { continue }
            // Acted on only if the locked row still names the profile locked before it.
            let lockedProfileID = try installation.optionalText(1)
            guard lockedProfileID == profileID, profileID == nil || profile != nil else { continue }
            return (installation, profile)
        }
        throw PostgresFailureVanished()
    }
}

/// A row the transaction itself just wrote is missing: never expected.
struct PostgresFailureVanished: Error {}
