import PostgresNIO

extension PostgresStore {
    public func allProjects() async throws -> [ProjectRecord] {
        let logger = logger
        return try await statement { client in
            try await client.rows(
                "SELECT \(unescaped: Self.projectColumns) FROM projects ORDER BY created_at, id", logger: logger
            ).map(Self.project)
        }
    }

    public func sealedCells() async throws -> [SealedCell] {
        let logger = logger
        return try await statement { client in
            let secrets = try await client.rows(
                "SELECT project_id, kid, secret FROM identity_secrets", logger: logger
            ).map {
                SealedCell(
                    kind: .identitySecret, projectID: try $0.text(0), rowID: try $0.text(1),
                    stored: Array(try $0.text(2).utf8))
            }
            let keys = try await client.rows(
                "SELECT project_id, kid, private_key FROM session_keys", logger: logger
            ).map {
                SealedCell(kind: .sessionKey, projectID: try $0.text(0), rowID: try $0.text(1), stored: try $0.bytes(2))
            }
            let webhooks = try await client.rows(
                "SELECT project_id, id, secret, previous_secret FROM webhooks", logger: logger
            ).flatMap { row in
                let (projectID, id) = (try row.text(0), try row.text(1))
                return [
                    SealedCell(
                        kind: .webhookSecret, projectID: projectID, rowID: id, stored: Array(try row.text(2).utf8))
                ]
                    + (try row.optionalText(3).map {
                        [
                            SealedCell(
                                kind: .webhookPreviousSecret, projectID: projectID, rowID: id, stored: Array($0.utf8))
                        ]
                    } ?? [])
            }
            let operators = try await client.rows(
                "SELECT id, totp_secret FROM operators WHERE totp_secret IS NOT NULL", logger: logger
            ).map {
                SealedCell(
                    kind: .operatorTOTPSecret, projectID: "", rowID: try $0.text(0), stored: Array(try $0.text(1).utf8))
            }
            return secrets + keys + webhooks + operators
        }
    }

    public func replaceSealedCell(_ cell: SealedCell, with value: [UInt8]) async throws -> Bool {
        let logger = logger
        return try await statement { client in
            switch cell.kind {
            case .identitySecret:
                let (new, old) = (String(decoding: value, as: UTF8.self), String(decoding: cell.stored, as: UTF8.self))
                return try await client.rows(
                    """
                    UPDATE identity_secrets SET secret = \(new)
                    WHERE project_id = \(cell.projectID) AND kid = \(cell.rowID) AND secret = \(old)
                    RETURNING kid
                    """, logger: logger
                ).count == 1
            case .sessionKey:
                return try await client.rows(
                    """
                    UPDATE session_keys SET private_key = \(value.bytea)
                    WHERE project_id = \(cell.projectID) AND kid = \(cell.rowID) AND private_key = \(cell.stored.bytea)
                    RETURNING kid
                    """, logger: logger
                ).count == 1
            case .webhookSecret, .webhookPreviousSecret:
                let column = cell.kind == .webhookSecret ? "secret" : "previous_secret"
                let (new, old) = (String(decoding: value, as: UTF8.self), String(decoding: cell.stored, as: UTF8.self))
                return try await client.rows(
                    """
                    UPDATE webhooks SET \(unescaped: column) = \(new)
                    WHERE project_id = \(cell.projectID) AND id = \(cell.rowID) AND \(unescaped: column) = \(old)
                    RETURNING id
                    """, logger: logger
                ).count == 1
            case .operatorTOTPSecret:
                let (new, old) = (String(decoding: value, as: UTF8.self), String(decoding: cell.stored, as: UTF8.self))
                return try await client.rows(
                    """
                    UPDATE operators SET totp_secret = \(new) WHERE id = \(cell.rowID) AND totp_secret = \(old)
                    RETURNING id
                    """, logger: logger
                ).count == 1
            }
        }
    }
}
