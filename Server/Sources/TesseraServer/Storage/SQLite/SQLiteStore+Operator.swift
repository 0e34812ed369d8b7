/// Rotation of API keys and blocking of profiles (the operator's admin endpoints).
extension SQLiteStore {
    public func setProfileBlocked(
        projectID: String, profileID: String, blocked: Bool, reason: String?, now: Int64, origin: EventOrigin
    ) async throws -> ProfileRecord? {
        try await onLockedProfile(projectID: projectID, profileID: profileID, now: now, origin: origin) {
            profile, batch, connection in
            try Self.write(
                ProfileAdminProcedure.setBlocked(blocked, reason: reason, profile: profile), on: profile, now: now,
                batch: &batch, in: connection
            ).profile
        } ?? nil
    }

    public func apiKeyHashes(projectID: String, now: Int64) async throws -> [APIKeyHashRecord] {
        try readers.read { connection in
            var records: [APIKeyHashRecord] = []
            if let row = try connection.queryFirst(
                "SELECT publishable_key_hash, secret_key_hash FROM projects WHERE id = ?", [.init(projectID)])
            {
                records.append(APIKeyHashRecord(kind: .publishable, hash: row.blob(0), expiresAt: nil))
                records.append(APIKeyHashRecord(kind: .secret, hash: row.blob(1), expiresAt: nil))
            }
            for row in try connection.query(
                "SELECT kind, key_hash, expires_at FROM retired_api_keys WHERE project_id = ? AND expires_at > ?",
                [.init(projectID), .init(now)])
            {
                guard let kind = APIKeyKind(rawValue: row.text(0)) else { continue }
                records.append(APIKeyHashRecord(kind: kind, hash: row.blob(1), expiresAt: row.int(2)))
            }
            return records
        }
    }

    public func project(retiredAPIKeyHash hash: [UInt8], kind: APIKeyKind, now: Int64) async throws -> ProjectRecord? {
        try readers.read {
            try $0.queryFirst(
                """
                SELECT \(Self.projectColumns) FROM projects WHERE id =
                    (SELECT project_id FROM retired_api_keys WHERE key_hash = ? AND kind = ? AND expires_at > ?)
                """,
                [.init(hash), .init(kind.rawValue), .init(now)]
            ).map(Self.project)
        }
    }

    public func rotateAPIKey(
        projectID: String, kind: APIKeyKind, newKeyHash: [UInt8], graceUntil: Int64, now: Int64, origin: EventOrigin
    ) async throws -> Bool {
        let column = kind == .publishable ? "publishable_key_hash" : "secret_key_hash"
        return try await writer.write { connection in
            guard
                let old = try connection.queryFirst(
                    "SELECT \(column) FROM projects WHERE id = ?", [.init(projectID)])?.blob(0)
            else { return false }
            try connection.run(
                "DELETE FROM retired_api_keys WHERE project_id = ? AND expires_at <= ?", [.init(projectID), .init(now)])
            if graceUntil > now {
                try connection.run(
                    "INSERT INTO retired_api_keys (key_hash, project_id, kind, expires_at) VALUES (?, ?, ?, ?)",
                    [.init(old), .init(projectID), .init(kind.rawValue), .init(graceUntil)])
            }
            try connection.run(
                "UPDATE projects SET \(column) = ?, updated_at = ? WHERE id = ?",
                [.init(newKeyHash), .init(now), .init(projectID)])
            var batch = EventBatch(projectID: projectID, origin: origin, now: now)
            batch.append(.apiKeyRotated(kind: kind, graceUntil: graceUntil > now ? graceUntil : nil))
            try Self.append(batch, in: connection)
            return true
        }
    }
}
