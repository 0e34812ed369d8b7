import PostgresNIO

/// Rotation of API keys and blocking of profiles (the operator's admin endpoints).
extension PostgresStore {
    public func setProfileBlocked(
        projectID: String, profileID: String, blocked: Bool, reason: String?, now: Int64, origin: EventOrigin
    ) async throws -> ProfileRecord? {
        let logger = logger
        // A profile merged meanwhile is blocked as its survivor, an erased one is not found.
        return try await onLockedProfile(projectID: projectID, profileID: profileID, now: now, origin: origin) {
            profile, batch, connection in
            try await Self.write(
                ProfileAdminProcedure.setBlocked(blocked, reason: reason, profile: profile), on: profile, now: now,
                batch: &batch, in: connection, logger: logger
            ).profile
        } ?? nil
    }

    public func apiKeyHashes(projectID: String, now: Int64) async throws -> [APIKeyHashRecord] {
        let logger = logger
        return try await statement { client in
            try await client.rows(
                """
                SELECT 'publishable', publishable_key_hash, NULL::bigint FROM projects WHERE id = \(projectID)
                UNION ALL
                SELECT 'secret', secret_key_hash, NULL::bigint FROM projects WHERE id = \(projectID)
                UNION ALL
                SELECT kind, key_hash, expires_at FROM retired_api_keys
                WHERE project_id = \(projectID) AND expires_at > \(now)
                """, logger: logger
            ).compactMap { row in
                guard let kind = APIKeyKind(rawValue: try row.text(0)) else { return nil }
                return APIKeyHashRecord(kind: kind, hash: try row.bytes(1), expiresAt: try row.optionalInt(2))
            }
        }
    }

    public func project(retiredAPIKeyHash hash: [UInt8], kind: APIKeyKind, now: Int64) async throws -> ProjectRecord? {
        let logger = logger
        return try await statement { client in
            try await client.first(
                """
                SELECT \(unescaped: Self.projectColumns) FROM projects WHERE id =
                    (SELECT project_id FROM retired_api_keys
                     WHERE key_hash = \(hash.bytea) AND kind = \(kind.rawValue) AND expires_at > \(now))
                """, logger: logger
            ).map(Self.project)
        }
    }

    public func rotateAPIKey(
        projectID: String, kind: APIKeyKind, newKeyHash: [UInt8], graceUntil: Int64, now: Int64, origin: EventOrigin
    ) async throws -> Bool {
        let logger = logger
        let column = kind == .publishable ? "publishable_key_hash" : "secret_key_hash"
        return try await transaction { connection in
            guard
                let old = try await connection.first(
                    "SELECT \(unescaped: column) FROM projects WHERE id = \(projectID) FOR UPDATE", logger: logger)
            else { return false }
            let oldHash = try old.bytes(0)
            try await connection.rows(
                "DELETE FROM retired_api_keys WHERE project_id = \(projectID) AND expires_at <= \(now)", logger: logger)
            if graceUntil > now {
                try await connection.rows(
                    """
                    INSERT INTO retired_api_keys (key_hash, project_id, kind, expires_at)
                    VALUES (\(oldHash.bytea), \(projectID), \(kind.rawValue), \(graceUntil))
                    """, logger: logger)
            }
            try await connection.rows(
                """
                UPDATE projects SET \(unescaped: column) = \(newKeyHash.bytea), updated_at = \(now)
                WHERE id = \(projectID)
                """, logger: logger)
            var batch = EventBatch(projectID: projectID, origin: origin, now: now)
            batch.append(.apiKeyRotated(kind: kind, graceUntil: graceUntil > now ? graceUntil : nil))
            try await Self.append(batch, in: connection, logger: logger)
            return true
        }
    }
}
