import PostgresNIO

extension PostgresStore {

    static func appAttestRecord(_ row: PostgresCells) throws -> AppAttestRecord {
        var key: AppAttestKeyRecord?
        if let keyID = try row.optionalBytes(4) {
            key = AppAttestKeyRecord(
                keyID: keyID, publicKey: try row.optionalBytes(5) ?? [], counter: try row.optionalInt(6) ?? 0,
                environment: try row.optionalText(7) ?? "", appID: try row.optionalText(8) ?? "",
                receipt: try row.optionalBytes(9) ?? [], attestedAt: try row.optionalInt(10) ?? 0)
        }
        return AppAttestRecord(
            projectID: try row.text(0), installationID: try row.text(1), verdict: try row.text(2),
            enforceWouldRefuse: try row.bool(3), key: key, updatedAt: try row.int(11))
    }

    public func createAppAttestChallenge(projectID: String, challengeHash: [UInt8], expiresAt: Int64) async throws {
        let logger = logger
        try await statement { client in
            _ = try await client.rows(
                """
                INSERT INTO app_attest_challenges (challenge_hash, project_id, expires_at)
                VALUES (\(challengeHash.bytea), \(projectID), \(expiresAt))
                """, logger: logger)
        }
    }

    public func consumeAppAttestChallenge(projectID: String, challengeHash: [UInt8], now: Int64) async throws
        -> AppAttestChallengeSpend
    {
        let logger = logger
        // One DELETE: of two nodes spending the same challenge, the second finds the row gone. An expired
        // challenge is deleted too (the cleanup would): its expiry tells the two refusals apart.
        let expiresAt = try await statement { client in
            try await client.first(
                """
                DELETE FROM app_attest_challenges
                WHERE challenge_hash = \(challengeHash.bytea) AND project_id = \(projectID)
                RETURNING expires_at
                """, logger: logger
            ).map { try $0.int(0) }
        }
        guard let expiresAt else { return .unknown }
        return expiresAt > now ? .spent : .expired
    }

    public func appAttestState(projectID: String, installationID: String) async throws -> AppAttestState {
        let logger = logger
        return try await statement { client in
            let exists =
                try await client.first(
                    """
                    SELECT 1 FROM installations WHERE project_id = \(projectID) AND installation_id = \(installationID)
                    """, logger: logger) != nil
            let record = try await client.first(
                """
                SELECT \(unescaped: Self.appAttestColumns) FROM app_attest_installations
                WHERE project_id = \(projectID) AND installation_id = \(installationID)
                """, logger: logger
            ).map(Self.appAttestRecord)
            return AppAttestState(installationExists: exists, record: record)
        }
    }

    public func advanceAppAttestCounter(projectID: String, installationID: String, keyID: [UInt8], counter: Int64)
        async throws -> Bool
    {
        let logger = logger
        // Decided on the locked row: a concurrent assertion (on any node) waits for this transaction,
        // then reads the counter it stored.
        return try await transaction { connection in
            guard
                let row = try await connection.first(
                    """
                    SELECT key_id, counter FROM app_attest_installations
                    WHERE project_id = \(projectID) AND installation_id = \(installationID) FOR UPDATE
                    """, logger: logger),
                let storedKeyID = try row.optionalBytes(0), storedKeyID == keyID,
                let stored = try row.optionalInt(1), stored < counter
            else { return false }
            try await connection.rows(
                """
                UPDATE app_attest_installations SET counter = \(counter)
                WHERE project_id = \(projectID) AND installation_id = \(installationID)
                """, logger: logger)
            return true
        }
    }

    public func recordAppAttestVerdict(_ write: AppAttestVerdictWrite) async throws {
        let logger = logger
        let key = write.key
        var query: PostgresQuery = """
            INSERT INTO app_attest_installations (\(unescaped: Self.appAttestColumns))
            VALUES (\(write.projectID), \(write.installationID), \(write.verdict), \(write.enforceWouldRefuse),
                \(key?.keyID.bytea), \(key?.publicKey.bytea), \(key?.counter), \(key?.environment), \(key?.appID),
                \(key?.receipt.bytea), \(key?.attestedAt), \(write.now))
            ON CONFLICT (project_id, installation_id) DO UPDATE SET verdict = excluded.verdict,
                enforce_would_refuse = excluded.enforce_would_refuse, updated_at = excluded.updated_at
            """
        if write.replacesKey {
            query.sql += """
                , key_id = excluded.key_id, public_key = excluded.public_key, counter = excluded.counter,
                    environment = excluded.environment, app_id = excluded.app_id, receipt = excluded.receipt,
                    attested_at = excluded.attested_at
                """
        }
        let upsert = query
        try await statement { client in _ = try await client.rows(upsert, logger: logger) }
    }

    public func appAttestRecords(projectID: String, installationIDs: [String]) async throws -> [AppAttestRecord] {
        guard !installationIDs.isEmpty else { return [] }
        let logger = logger
        return try await statement { client in
            try await client.rows(
                """
                SELECT \(unescaped: Self.appAttestColumns) FROM app_attest_installations
                WHERE project_id = \(projectID) AND installation_id = ANY(\(installationIDs)::text[])
                ORDER BY installation_id
                """, logger: logger
            ).map(Self.appAttestRecord)
        }
    }

    public func installationIDs(projectID: String, profileID: String) async throws -> [String] {
        let logger = logger
        let query = Self.installationIDsStatement(projectID: projectID, profileID: profileID)
        return try await statement { client in try await client.rows(query, logger: logger).map { try $0.text(0) } }
    }

    /// The statement of ``installationIDs(projectID:profileID:)`` (its plan is tested): a union of
    /// its two indexes' reads, where the OR would read the primary key's range of every installation
    /// of the project.
    static func installationIDsStatement(projectID: String, profileID: String) -> PostgresQuery {
        """
        SELECT installation_id FROM (
            SELECT installation_id, created_at FROM installations
            WHERE profile_id = \(profileID) AND project_id = \(projectID)
            UNION
            SELECT installation_id, created_at FROM installations
            WHERE previous_profile_id = \(profileID) AND project_id = \(projectID)) i
        ORDER BY created_at, installation_id LIMIT 100
        """
    }

    public func appAttestCounts(projectID: String) async throws -> AppAttestCounts {
        let logger = logger
        return try await statement { client in
            var counts = AppAttestCounts()
            for row in try await client.rows(
                """
                SELECT CASE WHEN verdict LIKE 'failed%' THEN 'failed' ELSE verdict END, COUNT(*),
                    COUNT(*) FILTER (WHERE enforce_would_refuse)
                FROM app_attest_installations WHERE project_id = \(projectID) GROUP BY 1
                """, logger: logger)
            {
                counts.verdicts[try row.text(0)] = Int(try row.int(1))
                counts.enforceWouldRefuse += Int(try row.int(2))
            }
            return counts
        }
    }
}
