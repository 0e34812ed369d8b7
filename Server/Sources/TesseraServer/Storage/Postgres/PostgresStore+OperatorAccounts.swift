import Logging
import PostgresNIO

/// Operator accounts of the console, their enrollment links and console sessions.
extension PostgresStore {

    /// An operator row (at `offset`), its TOTP secret opened.
    static func operatorRecord(_ row: PostgresCells, at offset: Int = 0, keys: MasterKeyring) throws
        -> OperatorRecord
    {
        let id = try row.text(offset)
        return OperatorRecord(
            id: id, email: try row.text(offset + 1),
            role: OperatorRole(rawValue: try row.text(offset + 2)) ?? .viewer,
            passwordHash: try row.optionalText(offset + 3),
            totpSecret: try row.optionalText(offset + 4).map {
                try keys.open(Array($0.utf8), binding: .operatorTOTPSecret(operatorID: id))
            },
            totpLastStep: try row.optionalInt(offset + 5), createdAt: try row.int(offset + 6),
            enrolledAt: try row.optionalInt(offset + 7), lastLoginAt: try row.optionalInt(offset + 8))
    }

    static func operatorSession(_ row: PostgresCells) throws -> OperatorSessionRecord {
        OperatorSessionRecord(
            id: try row.text(0), operatorID: try row.text(1), tokenHash: try row.bytes(2), csrfToken: try row.text(3),
            createdAt: try row.int(4), lastSeenAt: try row.int(5), expiresAt: try row.int(6))
    }

    /// The TOTP secret as stored: sealed text, or nil.
    static func sealedTOTP(_ secret: [UInt8]?, operatorID: String, keys: MasterKeyring) -> String? {
        secret.map {
            String(decoding: keys.seal($0, binding: .operatorTOTPSecret(operatorID: operatorID)), as: UTF8.self)
        }
    }

    public func createOperator(_ record: OperatorRecord, enrollmentTokenHash: [UInt8], enrollmentExpiresAt: Int64)
        async throws
    {
        let logger = logger
        let totp = Self.sealedTOTP(record.totpSecret, operatorID: record.id, keys: masterKeys)
        try await transaction { connection in
            do {
                try await connection.rows(
                    """
                    INSERT INTO operators (\(unescaped: Self.operatorColumns))
                    VALUES (\(record.id), \(record.email), \(record.role.rawValue), \(record.passwordHash), \(totp),
                        \(record.totpLastStep), \(record.createdAt), \(record.enrolledAt), \(record.lastLoginAt))
                    """, logger: logger)
            } catch  where Self.isUniqueViolation(error, constraint: "operators_email_key") {
                throw CoreError.operatorExists
            }
            try await connection.rows(
                """
                INSERT INTO operator_enrollments (token_hash, operator_id, expires_at)
                VALUES (\(enrollmentTokenHash.bytea), \(record.id), \(enrollmentExpiresAt))
                """, logger: logger)
        }
    }

    public func operators() async throws -> [OperatorRecord] {
        let (logger, keys) = (logger, masterKeys)
        return try await statement { client in
            try await client.rows(
                "SELECT \(unescaped: Self.operatorColumns) FROM operators ORDER BY created_at, id", logger: logger
            ).map { try Self.operatorRecord($0, keys: keys) }
        }
    }

    public func operatorRecord(id: String) async throws -> OperatorRecord? {
        let (logger, keys) = (logger, masterKeys)
        return try await statement { client in
            try await client.first(
                "SELECT \(unescaped: Self.operatorColumns) FROM operators WHERE id = \(id)", logger: logger
            ).map { try Self.operatorRecord($0, keys: keys) }
        }
    }

    public func operatorRecord(email: String) async throws -> OperatorRecord? {
        let (logger, keys) = (logger, masterKeys)
        return try await statement { client in
            try await client.first(
                "SELECT \(unescaped: Self.operatorColumns) FROM operators WHERE email = \(email)", logger: logger
            ).map { try Self.operatorRecord($0, keys: keys) }
        }
    }

    public func removeOperator(id: String) async throws -> Bool {
        let logger = logger
        return try await transaction { connection in
            // Locked first, so a sign-in under way commits its session before this deletes them.
            try await connection.rows("SELECT 1 FROM operators WHERE id = \(id) FOR UPDATE", logger: logger)
            try await connection.rows("DELETE FROM operator_sessions WHERE operator_id = \(id)", logger: logger)
            try await connection.rows("DELETE FROM operator_enrollments WHERE operator_id = \(id)", logger: logger)
            return try await connection.rows("DELETE FROM operators WHERE id = \(id) RETURNING id", logger: logger)
                .count == 1
        }
    }

    public func replaceEnrollment(operatorID: String, tokenHash: [UInt8], expiresAt: Int64) async throws -> Bool {
        let logger = logger
        return try await transaction { connection in
            guard
                try await connection.first(
                    "SELECT 1 FROM operators WHERE id = \(operatorID) FOR UPDATE", logger: logger) != nil
            else { return false }
            try await connection.rows(
                "DELETE FROM operator_enrollments WHERE operator_id = \(operatorID)", logger: logger)
            try await connection.rows(
                """
                INSERT INTO operator_enrollments (token_hash, operator_id, expires_at)
                VALUES (\(tokenHash.bytea), \(operatorID), \(expiresAt))
                """, logger: logger)
            return true
        }
    }

    public func enrollment(tokenHash: [UInt8], now: Int64) async throws -> OperatorRecord? {
        let (logger, keys) = (logger, masterKeys)
        return try await statement { client in
            try await client.first(
                """
                SELECT \(unescaped: Self.qualifiedOperatorColumns) FROM operator_enrollments e
                JOIN operators o ON o.id = e.operator_id WHERE e.token_hash = \(tokenHash.bytea) AND e.expires_at > \(now)
                """, logger: logger
            ).map { try Self.operatorRecord($0, keys: keys) }
        }
    }

    public func completeEnrollment(
        tokenHash: [UInt8], passwordHash: String, totpSecret: [UInt8]?, totpLastStep: Int64?, now: Int64
    )
        async throws -> OperatorRecord?
    {
        let (logger, keys) = (logger, masterKeys)
        return try await transaction { connection in
            // The operator's row first (as a sign-in and a removal lock it), so a sign-in under the
            // old password either commits first, and its session is ended below, or waits and
            // finds the new password. Deleting the link then claims it: of two concurrent
            // completions, one finds it gone.
            guard
                let seen = try await connection.first(
                    "SELECT operator_id FROM operator_enrollments WHERE token_hash = \(tokenHash.bytea)",
                    logger: logger)?.text(0),
                try await connection.first("SELECT 1 FROM operators WHERE id = \(seen) FOR UPDATE", logger: logger)
                    != nil,
                let operatorID = try await connection.first(
                    """
                    DELETE FROM operator_enrollments
                    WHERE token_hash = \(tokenHash.bytea) AND operator_id = \(seen) AND expires_at > \(now)
                    RETURNING operator_id
                    """, logger: logger
                )?.text(0)
            else { return nil }
            // Any other link of the operator goes too; sessions under the old password end.
            try await connection.rows(
                "DELETE FROM operator_enrollments WHERE operator_id = \(operatorID)", logger: logger)
            try await connection.rows("DELETE FROM operator_sessions WHERE operator_id = \(operatorID)", logger: logger)
            let totp = Self.sealedTOTP(totpSecret, operatorID: operatorID, keys: keys)
            return try await connection.first(
                """
                UPDATE operators SET password_hash = \(passwordHash), totp_secret = \(totp), totp_last_step = \(totpLastStep),
                    enrolled_at = \(now)
                WHERE id = \(operatorID) RETURNING \(unescaped: Self.operatorColumns)
                """, logger: logger
            ).map { try Self.operatorRecord($0, keys: keys) }
        }
    }

    public func logInOperator(session: OperatorSessionRecord, passwordHash: String, totpStep: Int64?)
        async throws -> OperatorLoginOutcome
    {
        let logger = logger
        return try await transaction { connection in
            // Decided on the operator's locked row: a password reset or a removal that committed
            // since the password was checked refuses this sign-in, and one that comes later waits
            // for it and then ends the session it opened.
            guard
                let row = try await connection.first(
                    "SELECT password_hash, totp_last_step FROM operators WHERE id = \(session.operatorID) FOR UPDATE",
                    logger: logger)
            else { return .unknownOperator }
            guard let current = try row.optionalText(0), current == passwordHash else { return .passwordChanged }
            if let totpStep, let last = try row.optionalInt(1), last >= totpStep { return .totpStepUsed }
            try await connection.rows(
                """
                UPDATE operators SET last_login_at = \(session.createdAt),
                    totp_last_step = COALESCE(\(totpStep), totp_last_step)
                WHERE id = \(session.operatorID)
                """, logger: logger)
            try await Self.insertOperatorSession(session, in: connection, logger: logger)
            return .signedIn
        }
    }

    /// Writes a new console session's row.
    static func insertOperatorSession(
        _ session: OperatorSessionRecord, in connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.rows(
            """
            INSERT INTO operator_sessions
                (id, operator_id, token_hash, csrf_token, created_at, last_seen_at, expires_at)
            VALUES (\(session.id), \(session.operatorID), \(session.tokenHash.bytea), \(session.csrfToken),
                \(session.createdAt), \(session.lastSeenAt), \(session.expiresAt))
            """, logger: logger)
    }

    public func createOperatorSession(_ session: OperatorSessionRecord) async throws {
        let logger = logger
        try await transaction { try await Self.insertOperatorSession(session, in: $0, logger: logger) }
    }

    public func operatorSession(tokenHash: [UInt8], now: Int64) async throws
        -> (OperatorSessionRecord, OperatorRecord)?
    {
        let (logger, keys) = (logger, masterKeys)
        let idleBefore = now - OperatorSessionRecord.idleSeconds
        let row = try await statement { client in
            try await client.first(
                """
                SELECT \(unescaped: Self.operatorSessionColumns), \(unescaped: Self.qualifiedOperatorColumns)
                FROM operator_sessions s JOIN operators o ON o.id = s.operator_id
                WHERE s.token_hash = \(tokenHash.bytea) AND s.expires_at > \(now) AND s.last_seen_at > \(idleBefore)
                """, logger: logger
            ).map { (try Self.operatorSession($0), try Self.operatorRecord($0, at: 7, keys: keys)) }
        }
        return row
    }

    public func touchOperatorSession(id: String, lastSeenAt: Int64) async throws {
        let logger = logger
        try await statement { client in
            _ = try await client.rows(
                """
                UPDATE operator_sessions SET last_seen_at = \(lastSeenAt)
                WHERE id = \(id) AND last_seen_at < \(lastSeenAt)
                """, logger: logger)
        }
    }

    public func deleteOperatorSession(id: String) async throws {
        let logger = logger
        try await statement { client in
            _ = try await client.rows("DELETE FROM operator_sessions WHERE id = \(id)", logger: logger)
        }
    }

    @discardableResult
    public func recordOperatorLogin(id: String, now: Int64, totpStep: Int64?) async throws -> Bool {
        let logger = logger
        return try await statement { client in
            if let totpStep {
                return try await client.rows(
                    """
                    UPDATE operators SET last_login_at = \(now), totp_last_step = \(totpStep)
                    WHERE id = \(id) AND (totp_last_step IS NULL OR totp_last_step < \(totpStep)) RETURNING id
                    """, logger: logger
                ).count == 1
            }
            return try await client.rows(
                "UPDATE operators SET last_login_at = \(now) WHERE id = \(id) RETURNING id", logger: logger
            ).count == 1
        }
    }

    @discardableResult
    public func deleteOperatorSessions(operatorID: String) async throws -> Int {
        let logger = logger
        return try await statement { client in
            try await client.rows(
                "DELETE FROM operator_sessions WHERE operator_id = \(operatorID) RETURNING id", logger: logger
            ).count
        }
    }

    /// Deletes up to `batchSize` expired enrollments and up to `batchSize` console sessions past their
    /// absolute or idle end (part of ``deleteExpired(now:batchSize:)``).
    func deleteExpiredOperatorRows(now: Int64, batchSize: Int) async throws -> (sessions: Int, enrollments: Int) {
        let logger = logger
        let (limit, idleBefore) = (Int64(batchSize), now - OperatorSessionRecord.idleSeconds)
        return try await statement { client in
            let sessions = try await client.rows(
                """
                DELETE FROM operator_sessions WHERE id IN (
                    SELECT id FROM operator_sessions WHERE expires_at <= \(now) OR last_seen_at <= \(idleBefore)
                    LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                RETURNING id
                """, logger: logger
            ).count
            let enrollments = try await client.rows(
                """
                DELETE FROM operator_enrollments WHERE token_hash IN (
                    SELECT token_hash FROM operator_enrollments WHERE expires_at <= \(now)
                    LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                RETURNING operator_id
                """, logger: logger
            ).count
            return (sessions, enrollments)
        }
    }
}
