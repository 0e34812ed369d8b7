import Logging
import PostgresNIO

extension PostgresStore {
    /// The number of ``contextColumns``.
    static let contextColumnCount = 22

    static func profile(_ row: PostgresCells) throws -> ProfileRecord { try profile(row, at: 0) }

    static func profile(_ row: PostgresCells, at offset: Int) throws -> ProfileRecord {
        ProfileRecord(
            id: try row.text(offset), projectID: try row.text(offset + 1),
            kind: ProfileRecord.Kind(rawValue: try row.text(offset + 2)) ?? .anonymous,
            externalID: try row.optionalText(offset + 3), verified: try row.bool(offset + 4),
            name: try row.optionalText(offset + 5), avatarURL: try row.optionalText(offset + 6),
            email: try row.optionalText(offset + 7), createdAt: try row.int(offset + 8),
            updatedAt: try row.int(offset + 9), blockedAt: try row.optionalInt(offset + 10))
    }

    /// A session of a row of ``sessionColumns``.
    static func session(_ row: PostgresCells) throws -> SessionRecord { try session(row, jktAt: 9) }

    /// A session of a row that starts with ``sessionColumns`` but its `jkt` and `key_tier`, which are at
    /// `jktAt` and the next column.
    static func session(_ row: PostgresCells, jktAt: Int) throws -> SessionRecord {
        SessionRecord(
            id: try row.text(0), projectID: try row.text(1), profileID: try row.text(2),
            installationID: try row.optionalText(3),
            kind: SessionRecord.Kind(rawValue: try row.text(4)) ?? .anonymous, createdAt: try row.int(5),
            lastAuthenticatedAt: try row.int(6), expiresAt: try row.int(7), revokedAt: try row.optionalInt(8),
            jkt: try row.optionalText(jktAt),
            keyTier: try row.optionalText(jktAt + 1).flatMap(SessionRecord.KeyTier.init(rawValue:)))
    }

    /// A row of ``contextColumns``: the session's columns, the profile's, then the session's `jkt` and
    /// `key_tier`.
    static func context(_ row: PostgresCells) throws -> SessionContext {
        SessionContext(session: try session(row, jktAt: 20), profile: try profile(row, at: 9))
    }

    static func project(_ row: PostgresCells) throws -> ProjectRecord {
        var settings = ProjectSettings()
        settings.allowUnverifiedIdentify = try row.bool(3)
        settings.requireAudience = try row.bool(4)
        settings.expectedIssuer = try row.optionalText(5)
        settings.maxIdentityTokenLifetimeSeconds = try row.int(6)
        settings.leewaySeconds = try row.int(7)
        settings.anonymousSessionMinutes = try row.int(8)
        settings.identifiedSessionMinutes = try row.int(9)
        settings.rateLimits.anonymousStartsPerMinute = try row.optionalInt(12)
        settings.rateLimits.failedIdentifiesPerMinute = try row.optionalInt(13)
        settings.rateLimits.failedIdentifiesPerInstallationPerMinute = try row.optionalInt(14)
        settings.sessionBinding = ProjectSettings.SessionBinding(rawValue: try row.text(15)) ?? .optional
        settings.dpopNonceRequired = try row.bool(16)
        settings.maxSessionsPerProfile = try row.optionalInt(17)
        settings.appAttest = AppAttestSettings(
            mode: try row.text(18), appIDs: try row.text(19), environment: try row.text(20),
            allowUnsupported: try row.bool(21))
        return ProjectRecord(
            id: try row.text(0), name: try row.text(1), slug: try row.text(2), settings: settings,
            createdAt: try row.int(10), updatedAt: try row.int(11))
    }

    static func device(_ row: PostgresCells) throws -> DeviceRecord {
        DeviceRecord(
            id: try row.text(0), projectID: try row.text(1), sessionID: try row.text(2), profileID: try row.text(3),
            platform: try row.text(4), environment: try row.text(5), token: try row.text(6), createdAt: try row.int(7))
    }

    static func insert(profile: ProfileRecord, into connection: PostgresConnection, logger: Logger) async throws {
        try await connection.rows(
            """
            INSERT INTO profiles (\(unescaped: profileColumns))
            VALUES (\(profile.id), \(profile.projectID), \(profile.kind.rawValue), \(profile.externalID),
                \(profile.verified), \(profile.name), \(profile.avatarURL), \(profile.email), \(profile.createdAt),
                \(profile.updatedAt), \(profile.blockedAt))
            """, logger: logger)
    }

    static func insert(
        session: SessionRecord, tokenHash: [UInt8], into connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.rows(
            """
            INSERT INTO sessions (\(unescaped: sessionColumns), token_hash, client_address, user_agent)
            VALUES (\(session.id), \(session.projectID), \(session.profileID), \(session.installationID),
                \(session.kind.rawValue), \(session.createdAt), \(session.lastAuthenticatedAt), \(session.expiresAt),
                \(session.revokedAt), \(session.jkt), \(session.keyTier?.rawValue), \(tokenHash.bytea),
                \(session.client?.address), \(session.client?.userAgent))
            """, logger: logger)
    }

    /// How a transaction locks the profile it acts on.
    enum ProfileLock: String, Sendable {
        /// It changes the profile or ends its sessions (block, erase, revoke all, identify).
        case update = "FOR UPDATE"
        /// It only needs the profile to stay as it is until the commit (an anonymous restore).
        case share = "FOR SHARE"
    }

    /// Resolves `id` (a profile ID or an alias) and locks the profile's row, answering the row as
    /// the lock found it; nil when no such profile exists (any more).
    ///
    /// Every transaction that acts on a profile starts here, so none acts on what a read saw before
    /// the lock: when a merge or an erasure committed while this waited, the lock finds the row gone
    /// (READ COMMITTED sees the commit in the next statement) and the ID is resolved again. An alias
    /// then names the surviving profile, which is locked and answered as a request sent a moment
    /// later would find it; an erased profile resolves to nothing. Profiles are locked before the
    /// rows that hang off them (installations, sessions, devices): one lock order for every path.
    static func lockProfile(
        projectID: String, id: String, _ lock: ProfileLock, in connection: PostgresConnection, logger: Logger
    ) async throws -> ProfileRecord? {
        // Each round that finds the row gone follows one committed merge or erasure; an alias always
        // names a live profile (a merge moves the aliases of what it folds), so two rounds suffice
        // unless profiles keep merging under this transaction.
        for _ in 0..<8 {
            guard let resolved = try await resolveProfile(projectID: projectID, id: id, in: connection, logger: logger)
            else { return nil }
            if let locked = try await connection.first(
                """
                SELECT \(unescaped: profileColumns) FROM profiles
                WHERE id = \(resolved.id) AND project_id = \(projectID) \(unescaped: lock.rawValue)
                """, logger: logger
            ).map(profile) {
                return locked
            }
        }
        throw PostgresFailureVanished()
    }

    /// Runs `body` in one transaction on the profile `profileID` (an ID or an alias) as its lock
    /// (FOR UPDATE) found it, then writes the events `body` added to the batch; nil, with nothing
    /// written, when no such profile exists (any more). Every decision `body` makes comes from that
    /// row: a profile merged meanwhile is acted on as its survivor, an erased one is not found.
    func onLockedProfile<T: Sendable>(
        projectID: String, profileID: String, now: Int64, origin: EventOrigin,
        _ body: @escaping @Sendable (ProfileRecord, inout EventBatch, PostgresConnection) async throws -> T
    ) async throws -> T? {
        let logger = logger
        return try await transaction { connection in
            guard
                let profile = try await Self.lockProfile(
                    projectID: projectID, id: profileID, .update, in: connection, logger: logger)
            else { return nil }
            var batch = EventBatch(projectID: projectID, origin: origin, now: now)
            let result = try await body(profile, &batch, connection)
            try await Self.append(batch, in: connection, logger: logger)
            return result
        }
    }

    /// The profile with this ID or alias in the project, as a plain read: only for answers, never
    /// to decide a write (``lockProfile(projectID:id:_:in:logger:)``).
    static func resolveProfile(projectID: String, id: String, in connection: PostgresConnection, logger: Logger)
        async throws -> ProfileRecord?
    {
        try await connection.first(
            """
            SELECT \(unescaped: profileColumns) FROM profiles WHERE id = \(id) AND project_id = \(projectID)
            UNION ALL
            SELECT \(unescaped: qualifiedProfileColumns)
            FROM profile_aliases a JOIN profiles p ON p.id = a.profile_id
            WHERE a.alias_id = \(id) AND a.project_id = \(projectID) AND p.project_id = \(projectID)
            LIMIT 1
            """, logger: logger
        ).map(profile)
    }
}
