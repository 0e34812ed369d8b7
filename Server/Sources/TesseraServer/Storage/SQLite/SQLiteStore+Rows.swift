extension SQLiteStore {
    // The hottest statements, built once (the connection's statement cache is keyed by their text).
    static let contextByIDSQL =
        "SELECT \(contextColumns) FROM sessions s JOIN profiles p ON p.id = s.profile_id WHERE s.id = ?"
    static let contextByTokenHashSQL =
        "SELECT \(contextColumns) FROM sessions s JOIN profiles p ON p.id = s.profile_id WHERE s.token_hash = ?"

    static func profile(_ row: SQLiteRow, at offset: Int = 0) -> ProfileRecord {
        ProfileRecord(
            id: row.text(offset), projectID: row.text(offset + 1),
            kind: ProfileRecord.Kind(rawValue: row.text(offset + 2)) ?? .anonymous,
            externalID: row.optionalText(offset + 3), verified: row.bool(offset + 4),
            name: row.optionalText(offset + 5),
            avatarURL: row.optionalText(offset + 6), email: row.optionalText(offset + 7),
            createdAt: row.int(offset + 8),
            updatedAt: row.int(offset + 9), blockedAt: row.optionalInt(offset + 10))
    }

    /// A session of a row of ``sessionColumns`` from `offset`; its `jkt` and `key_tier` at `jktAt` and
    /// the next column (by default after the other columns).
    static func session(_ row: SQLiteRow, at offset: Int = 0, jktAt: Int? = nil) -> SessionRecord {
        SessionRecord(
            id: row.text(offset), projectID: row.text(offset + 1), profileID: row.text(offset + 2),
            installationID: row.optionalText(offset + 3),
            kind: SessionRecord.Kind(rawValue: row.text(offset + 4)) ?? .anonymous, createdAt: row.int(offset + 5),
            lastAuthenticatedAt: row.int(offset + 6), expiresAt: row.int(offset + 7),
            revokedAt: row.optionalInt(offset + 8), jkt: row.optionalText(jktAt ?? offset + 9),
            keyTier: row.optionalText((jktAt ?? offset + 9) + 1).flatMap(SessionRecord.KeyTier.init(rawValue:)))
    }

    /// A row of ``contextColumns``: the session's columns, the profile's, then the session's `jkt` and
    /// `key_tier`.
    static func context(_ row: SQLiteRow) -> SessionContext {
        SessionContext(session: session(row, jktAt: 20), profile: profile(row, at: 9))
    }

    static func project(_ row: SQLiteRow) -> ProjectRecord {
        var settings = ProjectSettings()
        settings.allowUnverifiedIdentify = row.bool(3)
        settings.requireAudience = row.bool(4)
        settings.expectedIssuer = row.optionalText(5)
        settings.maxIdentityTokenLifetimeSeconds = row.int(6)
        settings.leewaySeconds = row.int(7)
        settings.anonymousSessionMinutes = row.int(8)
        settings.identifiedSessionMinutes = row.int(9)
        settings.rateLimits.anonymousStartsPerMinute = row.optionalInt(12)
        settings.rateLimits.failedIdentifiesPerMinute = row.optionalInt(13)
        settings.rateLimits.failedIdentifiesPerInstallationPerMinute = row.optionalInt(14)
        settings.sessionBinding = ProjectSettings.SessionBinding(rawValue: row.text(15)) ?? .optional
        settings.dpopNonceRequired = row.bool(16)
        settings.maxSessionsPerProfile = row.optionalInt(17)
        settings.appAttest = AppAttestSettings(
            mode: row.text(18), appIDs: row.text(19), environment: row.text(20),
            allowUnsupported: row.bool(21))
        return ProjectRecord(
            id: row.text(0), name: row.text(1), slug: row.text(2), settings: settings, createdAt: row.int(10),
            updatedAt: row.int(11))
    }

    static func device(_ row: SQLiteRow) -> DeviceRecord {
        DeviceRecord(
            id: row.text(0), projectID: row.text(1), sessionID: row.text(2), profileID: row.text(3),
            platform: row.text(4), environment: row.text(5), token: row.text(6), createdAt: row.int(7))
    }

    static func insert(profile: ProfileRecord, into connection: SQLiteConnection) throws {
        try connection.run(
            "INSERT INTO profiles (\(profileColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                .init(profile.id), .init(profile.projectID), .init(profile.kind.rawValue), .init(profile.externalID),
                .init(profile.verified), .init(profile.name), .init(profile.avatarURL), .init(profile.email),
                .init(profile.createdAt), .init(profile.updatedAt), .init(profile.blockedAt),
            ])
    }

    static func insert(session: SessionRecord, tokenHash: [UInt8], into connection: SQLiteConnection) throws {
        try connection.run(
            """
            INSERT INTO sessions (\(sessionColumns), token_hash, client_address, user_agent)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .init(session.id), .init(session.projectID), .init(session.profileID), .init(session.installationID),
                .init(session.kind.rawValue), .init(session.createdAt), .init(session.lastAuthenticatedAt),
                .init(session.expiresAt), .init(session.revokedAt), .init(session.jkt),
                .init(session.keyTier?.rawValue), .init(tokenHash), .init(session.client?.address),
                .init(session.client?.userAgent),
            ])
    }
}
