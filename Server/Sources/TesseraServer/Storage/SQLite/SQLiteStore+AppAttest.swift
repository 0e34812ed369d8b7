extension SQLiteStore {

    static func appAttestRecord(_ row: SQLiteRow) -> AppAttestRecord {
        var key: AppAttestKeyRecord?
        if case .blob(let keyID) = row[4] {
            key = AppAttestKeyRecord(
                keyID: keyID, publicKey: row.blob(5), counter: row.int(6), environment: row.text(7),
                appID: row.text(8), receipt: row.blob(9), attestedAt: row.int(10))
        }
        return AppAttestRecord(
            projectID: row.text(0), installationID: row.text(1), verdict: row.text(2),
            enforceWouldRefuse: row.bool(3), key: key, updatedAt: row.int(11))
    }

    public func createAppAttestChallenge(projectID: String, challengeHash: [UInt8], expiresAt: Int64) async throws {
        _ = try await writer.write { connection in
            try connection.run(
                "INSERT INTO app_attest_challenges (challenge_hash, project_id, expires_at) VALUES (?, ?, ?)",
                [.init(challengeHash), .init(projectID), .init(expiresAt)])
        }
    }

    public func consumeAppAttestChallenge(projectID: String, challengeHash: [UInt8], now: Int64) async throws
        -> AppAttestChallengeSpend
    {
        // An expired challenge is deleted too (the cleanup would): its expiry tells the two refusals apart.
        let expiresAt = try await writer.write { connection in
            try connection.queryFirst(
                "DELETE FROM app_attest_challenges WHERE challenge_hash = ? AND project_id = ? RETURNING expires_at",
                [.init(challengeHash), .init(projectID)]
            )?.int(0)
        }
        guard let expiresAt else { return .unknown }
        return expiresAt > now ? .spent : .expired
    }

    public func appAttestState(projectID: String, installationID: String) async throws -> AppAttestState {
        try readers.read { connection in
            let exists =
                try connection.queryFirst(
                    "SELECT 1 FROM installations WHERE project_id = ? AND installation_id = ?",
                    [.init(projectID), .init(installationID)]) != nil
            let record = try connection.queryFirst(
                "SELECT \(Self.appAttestColumns) FROM app_attest_installations WHERE project_id = ? AND installation_id = ?",
                [.init(projectID), .init(installationID)]
            ).map(Self.appAttestRecord)
            return AppAttestState(installationExists: exists, record: record)
        }
    }

    public func advanceAppAttestCounter(projectID: String, installationID: String, keyID: [UInt8], counter: Int64)
        async throws -> Bool
    {
        // The one writer serialises this with every other write: the condition is read and changed at once.
        try await writer.write { connection in
            try connection.run(
                """
                UPDATE app_attest_installations SET counter = ?
                WHERE project_id = ? AND installation_id = ? AND key_id = ? AND counter < ?
                """,
                [.init(counter), .init(projectID), .init(installationID), .init(keyID), .init(counter)]) == 1
        }
    }

    public func recordAppAttestVerdict(_ write: AppAttestVerdictWrite) async throws {
        try await writer.write { connection in
            let key = write.key
            let values: [SQLiteValue] = [
                .init(write.projectID), .init(write.installationID), .init(write.verdict),
                .init(write.enforceWouldRefuse), key.map { .init($0.keyID) } ?? .null,
                key.map { .init($0.publicKey) } ?? .null, .init(key?.counter), .init(key?.environment),
                .init(key?.appID), key.map { .init($0.receipt) } ?? .null, .init(key?.attestedAt), .init(write.now),
            ]
            let keyUpdate =
                write.replacesKey
                ? """
                , key_id = excluded.key_id, public_key = excluded.public_key, counter = excluded.counter,
                environment = excluded.environment, app_id = excluded.app_id, receipt = excluded.receipt,
                attested_at = excluded.attested_at
                """ : ""
            try connection.run(
                """
                INSERT INTO app_attest_installations (\(Self.appAttestColumns))
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (project_id, installation_id) DO UPDATE SET verdict = excluded.verdict,
                    enforce_would_refuse = excluded.enforce_would_refuse, updated_at = excluded.updated_at\(keyUpdate)
                """, values)
        }
    }

    public func appAttestRecords(projectID: String, installationIDs: [String]) async throws -> [AppAttestRecord] {
        guard !installationIDs.isEmpty else { return [] }
        return try readers.read { connection in
            let marks = Array(repeating: "?", count: installationIDs.count).joined(separator: ", ")
            return try connection.query(
                """
                SELECT \(Self.appAttestColumns) FROM app_attest_installations
                WHERE project_id = ? AND installation_id IN (\(marks)) ORDER BY installation_id
                """,
                [.init(projectID)] + installationIDs.map { SQLiteValue($0) }
            ).map(Self.appAttestRecord)
        }
    }

    public func installationIDs(projectID: String, profileID: String) async throws -> [String] {
        let statement = Self.installationIDsStatement(projectID: projectID, profileID: profileID)
        return try readers.read { try $0.query(statement.sql, statement.bindings).map { $0.text(0) } }
    }

    /// The statement of ``installationIDs(projectID:profileID:)`` (its plan is tested): `+project_id`,
    /// so it is not read through the primary key (every installation of the project) but each of the
    /// OR's terms through its own index.
    static func installationIDsStatement(projectID: String, profileID: String) -> Statement {
        (
            """
            SELECT installation_id FROM installations
            WHERE +project_id = ? AND (profile_id = ? OR previous_profile_id = ?)
            ORDER BY created_at, installation_id LIMIT 100
            """, [.init(projectID), .init(profileID), .init(profileID)]
        )
    }

    public func appAttestCounts(projectID: String) async throws -> AppAttestCounts {
        try readers.read { connection in
            var counts = AppAttestCounts()
            for row in try connection.query(
                """
                SELECT CASE WHEN verdict LIKE 'failed%' THEN 'failed' ELSE verdict END, COUNT(*),
                    SUM(enforce_would_refuse)
                FROM app_attest_installations WHERE project_id = ? GROUP BY 1
                """,
                [.init(projectID)])
            {
                counts.verdicts[row.text(0)] = Int(row.int(1))
                counts.enforceWouldRefuse += Int(row.int(2))
            }
            return counts
        }
    }
}
