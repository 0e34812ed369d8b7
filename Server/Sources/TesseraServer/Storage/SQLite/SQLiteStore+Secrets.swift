extension SQLiteStore {
    public func sealedCells() async throws -> [SealedCell] {
        try readers.read { connection in
            let secrets = try connection.query("SELECT project_id, kid, secret FROM identity_secrets").map {
                SealedCell(kind: .identitySecret, projectID: $0.text(0), rowID: $0.text(1), stored: $0.blob(2))
            }
            let keys = try connection.query("SELECT project_id, kid, private_key FROM session_keys").map {
                SealedCell(kind: .sessionKey, projectID: $0.text(0), rowID: $0.text(1), stored: $0.blob(2))
            }
            let webhooks = try connection.query(
                "SELECT project_id, id, secret, previous_secret FROM webhooks"
            ).flatMap { row in
                [SealedCell(kind: .webhookSecret, projectID: row.text(0), rowID: row.text(1), stored: row.blob(2))]
                    + (row.optionalText(3).map {
                        [
                            SealedCell(
                                kind: .webhookPreviousSecret, projectID: row.text(0), rowID: row.text(1),
                                stored: Array($0.utf8))
                        ]
                    } ?? [])
            }
            let operators = try connection.query(
                "SELECT id, totp_secret FROM operators WHERE totp_secret IS NOT NULL"
            ).map { SealedCell(kind: .operatorTOTPSecret, projectID: "", rowID: $0.text(0), stored: $0.blob(1)) }
            return secrets + keys + webhooks + operators
        }
    }

    public func replaceSealedCell(_ cell: SealedCell, with value: [UInt8]) async throws -> Bool {
        try await writer.write { connection in
            switch cell.kind {
            case .identitySecret:
                return try connection.run(
                    "UPDATE identity_secrets SET secret = ? WHERE project_id = ? AND kid = ? AND secret = ?",
                    [
                        .init(String(decoding: value, as: UTF8.self)), .init(cell.projectID), .init(cell.rowID),
                        .init(String(decoding: cell.stored, as: UTF8.self)),
                    ]) == 1
            case .sessionKey:
                return try connection.run(
                    "UPDATE session_keys SET private_key = ? WHERE project_id = ? AND kid = ? AND private_key = ?",
                    [.init(value), .init(cell.projectID), .init(cell.rowID), .init(cell.stored)]) == 1
            case .webhookSecret, .webhookPreviousSecret:
                let column = cell.kind == .webhookSecret ? "secret" : "previous_secret"
                return try connection.run(
                    "UPDATE webhooks SET \(column) = ? WHERE project_id = ? AND id = ? AND \(column) = ?",
                    [
                        .init(String(decoding: value, as: UTF8.self)), .init(cell.projectID), .init(cell.rowID),
                        .init(String(decoding: cell.stored, as: UTF8.self)),
                    ]) == 1
            case .operatorTOTPSecret:
                return try connection.run(
                    "UPDATE operators SET totp_secret = ? WHERE id = ? AND totp_secret = ?",
                    [
                        .init(String(decoding: value, as: UTF8.self)), .init(cell.rowID),
                        .init(String(decoding: cell.stored, as: UTF8.self)),
                    ]) == 1
            }
        }
    }
}
