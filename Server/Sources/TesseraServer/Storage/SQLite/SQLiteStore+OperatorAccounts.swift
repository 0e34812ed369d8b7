/// Operator accounts of the console, their enrollment links and console sessions.
extension SQLiteStore {

    /// An operator row (at `offset`), its TOTP secret opened.
    func operatorRecord(_ row: SQLiteRow, at offset: Int = 0) throws -> OperatorRecord {
        let id = row.text(offset)
        return OperatorRecord(
            id: id, email: row.text(offset + 1), role: OperatorRole(rawValue: row.text(offset + 2)) ?? .viewer,
            passwordHash: row.optionalText(offset + 3),
            totpSecret: try row.optionalText(offset + 4).map {
                try masterKeys.open(Array($0.utf8), binding: .operatorTOTPSecret(operatorID: id))
            },
            totpLastStep: row.optionalInt(offset + 5), createdAt: row.int(offset + 6),
            enrolledAt: row.optionalInt(offset + 7), lastLoginAt: row.optionalInt(offset + 8))
    }

    static func operatorSession(_ row: SQLiteRow) -> OperatorSessionRecord {
        OperatorSessionRecord(
            id: row.text(0), operatorID: row.text(1), tokenHash: row.blob(2), csrfToken: row.text(3),
            createdAt: row.int(4), lastSeenAt: row.int(5), expiresAt: row.int(6))
    }

    /// The TOTP secret as stored: sealed text, or NULL.
    private func sealedTOTP(_ secret: [UInt8]?, operatorID: String) -> SQLiteValue {
        secret.map {
            .text(
                String(
                    decoding: masterKeys.seal($0, binding: .operatorTOTPSecret(operatorID: operatorID)), as: UTF8.self))
        }
            ?? .null
    }

    public func createOperator(_ record: OperatorRecord, enrollmentTokenHash: [UInt8], enrollmentExpiresAt: Int64)
        async throws
    {
        let totp = sealedTOTP(record.totpSecret, operatorID: record.id)
        try await writer.write { connection in
            do {
                try connection.run(
                    "INSERT INTO operators (\(Self.operatorColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        .init(record.id), .init(record.email), .init(record.role.rawValue), .init(record.passwordHash),
                        totp, .init(record.totpLastStep), .init(record.createdAt), .init(record.enrolledAt),
                        .init(record.lastLoginAt),
                    ])
            } catch let error as SQLiteError where error.isUniqueViolation {
                throw CoreError.operatorExists
            }
            try connection.run(
                "INSERT INTO operator_enrollments (token_hash, operator_id, expires_at) VALUES (?, ?, ?)",
                [.init(enrollmentTokenHash), .init(record.id), .init(enrollmentExpiresAt)])
        }
    }

    public func operators() async throws -> [OperatorRecord] {
        let rows = try readers.read {
            try $0.query("SELECT \(Self.operatorColumns) FROM operators ORDER BY created_at, id")
        }
        return try rows.map { try operatorRecord($0) }
    }

    public func operatorRecord(id: String) async throws -> OperatorRecord? {
        let row = try readers.read {
            try $0.queryFirst("SELECT \(Self.operatorColumns) FROM operators WHERE id = ?", [.init(id)])
        }
        return try row.map { try operatorRecord($0) }
    }

    public func operatorRecord(email: String) async throws -> OperatorRecord? {
        let row = try readers.read {
            try $0.queryFirst("SELECT \(Self.operatorColumns) FROM operators WHERE email = ?", [.init(email)])
        }
        return try row.map { try operatorRecord($0) }
    }

    public func removeOperator(id: String) async throws -> Bool {
        try await writer.write { connection in
            try connection.run("DELETE FROM operator_sessions WHERE operator_id = ?", [.init(id)])
            try connection.run("DELETE FROM operator_enrollments WHERE operator_id = ?", [.init(id)])
            return try connection.run("DELETE FROM operators WHERE id = ?", [.init(id)]) == 1
        }
    }

    public func replaceEnrollment(operatorID: String, tokenHash: [UInt8], expiresAt: Int64) async throws -> Bool {
        try await writer.write { connection in
            guard try connection.queryFirst("SELECT 1 FROM operators WHERE id = ?", [.init(operatorID)]) != nil else {
                return false
            }
            try connection.run("DELETE FROM operator_enrollments WHERE operator_id = ?", [.init(operatorID)])
            try connection.run(
                "INSERT INTO operator_enrollments (token_hash, operator_id, expires_at) VALUES (?, ?, ?)",
                [.init(tokenHash), .init(operatorID), .init(expiresAt)])
            return true
        }
    }

    public func enrollment(tokenHash: [UInt8], now: Int64) async throws -> OperatorRecord? {
        let row = try readers.read {
            try $0.queryFirst(
                """
                SELECT \(Self.qualifiedOperatorColumns) FROM operator_enrollments e
                JOIN operators o ON o.id = e.operator_id WHERE e.token_hash = ? AND e.expires_at > ?
                """,
                [.init(tokenHash), .init(now)])
        }
        return try row.map { try operatorRecord($0) }
    }

    public func completeEnrollment(
        tokenHash: [UInt8], passwordHash: String, totpSecret: [UInt8]?, totpLastStep: Int64?, now: Int64
    )
        async throws -> OperatorRecord?
    {
        let keys = masterKeys
        let row = try await writer.write { connection -> SQLiteRow? in
            guard
                let operatorID = try connection.queryFirst(
                    "SELECT operator_id FROM operator_enrollments WHERE token_hash = ? AND expires_at > ?",
                    [.init(tokenHash), .init(now)]
                )?.text(0)
            else { return nil }
            // The link is used up, with any other link of the operator; sessions under the old
            // password end.
            try connection.run("DELETE FROM operator_enrollments WHERE operator_id = ?", [.init(operatorID)])
            try connection.run("DELETE FROM operator_sessions WHERE operator_id = ?", [.init(operatorID)])
            let totp: SQLiteValue =
                totpSecret.map {
                    .text(
                        String(
                            decoding: keys.seal($0, binding: .operatorTOTPSecret(operatorID: operatorID)),
                            as: UTF8.self))
                } ?? .null
            try connection.run(
                """
                UPDATE operators SET password_hash = ?, totp_secret = ?, totp_last_step = ?, enrolled_at = ?
                WHERE id = ?
                """,
                [.init(passwordHash), totp, .init(totpLastStep), .init(now), .init(operatorID)])
            return try connection.queryFirst(
                "SELECT \(Self.operatorColumns) FROM operators WHERE id = ?", [.init(operatorID)])
        }
        return try row.map { try operatorRecord($0) }
    }

    public func logInOperator(session: OperatorSessionRecord, passwordHash: String, totpStep: Int64?)
        async throws -> OperatorLoginOutcome
    {
        try await writer.write { connection in
            // Decided in the writer's transaction: a password reset or a removal that committed
            // since the password was checked refuses this sign-in.
            guard
                let row = try connection.queryFirst(
                    "SELECT password_hash, totp_last_step FROM operators WHERE id = ?", [.init(session.operatorID)])
            else { return .unknownOperator }
            guard let current = row.optionalText(0), current == passwordHash else { return .passwordChanged }
            if let totpStep, let last = row.optionalInt(1), last >= totpStep { return .totpStepUsed }
            try connection.run(
                "UPDATE operators SET last_login_at = ?, totp_last_step = COALESCE(?, totp_last_step) WHERE id = ?",
                [.init(session.createdAt), .init(totpStep), .init(session.operatorID)])
            try Self.insertOperatorSession(session, in: connection)
            return .signedIn
        }
    }

    /// Writes a new console session's row.
    static func insertOperatorSession(_ session: OperatorSessionRecord, in connection: SQLiteConnection) throws {
        try connection.run(
            """
            INSERT INTO operator_sessions
                (id, operator_id, token_hash, csrf_token, created_at, last_seen_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .init(session.id), .init(session.operatorID), .init(session.tokenHash), .init(session.csrfToken),
                .init(session.createdAt), .init(session.lastSeenAt), .init(session.expiresAt),
            ])
    }

    public func createOperatorSession(_ session: OperatorSessionRecord) async throws {
        _ = try await writer.write { connection in
            try Self.insertOperatorSession(session, in: connection)
        }
    }

    public func operatorSession(tokenHash: [UInt8], now: Int64) async throws
        -> (OperatorSessionRecord, OperatorRecord)?
    {
        let row = try readers.read {
            try $0.queryFirst(
                """
                SELECT \(Self.operatorSessionColumns), \(Self.qualifiedOperatorColumns) FROM operator_sessions s
                JOIN operators o ON o.id = s.operator_id
                WHERE s.token_hash = ? AND s.expires_at > ? AND s.last_seen_at > ?
                """,
                [.init(tokenHash), .init(now), .init(now - OperatorSessionRecord.idleSeconds)])
        }
        guard let row else { return nil }
        return (Self.operatorSession(row), try operatorRecord(row, at: 7))
    }

    public func touchOperatorSession(id: String, lastSeenAt: Int64) async throws {
        _ = try await writer.write { connection in
            try connection.run(
                "UPDATE operator_sessions SET last_seen_at = ? WHERE id = ? AND last_seen_at < ?",
                [.init(lastSeenAt), .init(id), .init(lastSeenAt)])
        }
    }

    public func deleteOperatorSession(id: String) async throws {
        _ = try await writer.write { connection in
            try connection.run("DELETE FROM operator_sessions WHERE id = ?", [.init(id)])
        }
    }

    @discardableResult
    public func recordOperatorLogin(id: String, now: Int64, totpStep: Int64?) async throws -> Bool {
        try await writer.write { connection in
            if let totpStep {
                return try connection.run(
                    """
                    UPDATE operators SET last_login_at = ?, totp_last_step = ?
                    WHERE id = ? AND (totp_last_step IS NULL OR totp_last_step < ?)
                    """,
                    [.init(now), .init(totpStep), .init(id), .init(totpStep)]) == 1
            }
            return try connection.run(
                "UPDATE operators SET last_login_at = ? WHERE id = ?", [.init(now), .init(id)]) == 1
        }
    }

    @discardableResult
    public func deleteOperatorSessions(operatorID: String) async throws -> Int {
        try await writer.write { connection in
            try connection.run("DELETE FROM operator_sessions WHERE operator_id = ?", [.init(operatorID)])
        }
    }

    /// Deletes up to `batchSize` expired enrollments and up to `batchSize` console sessions past their
    /// absolute or idle end (part of ``deleteExpired(now:batchSize:)``).
    static func deleteExpiredOperatorRows(now: Int64, batchSize: Int, in connection: SQLiteConnection) throws
        -> (sessions: Int, enrollments: Int)
    {
        let sessions = try connection.run(
            """
            DELETE FROM operator_sessions WHERE id IN (
                SELECT id FROM operator_sessions WHERE expires_at <= ?
                UNION SELECT id FROM operator_sessions WHERE last_seen_at <= ? LIMIT ?)
            """,
            [.init(now), .init(now - OperatorSessionRecord.idleSeconds), .init(batchSize)])
        let enrollments = try connection.run(
            """
            DELETE FROM operator_enrollments WHERE token_hash IN
                (SELECT token_hash FROM operator_enrollments WHERE expires_at <= ? LIMIT ?)
            """,
            [.init(now), .init(batchSize)])
        return (sessions, enrollments)
    }
}
