/// Webhook endpoints, their secrets sealed under the master key.
extension SQLiteStore {

    func webhook(_ row: SQLiteRow) throws -> WebhookRecord {
        let (id, projectID) = (row.text(0), row.text(1))
        return WebhookRecord(
            id: id, projectID: projectID, url: row.text(2), types: WebhookRecord.types(stored: row.optionalText(3)),
            description: row.optionalText(4), enabled: row.bool(5), createdAt: row.int(6), updatedAt: row.int(7),
            disabledAt: row.optionalInt(8), disabledReason: row.optionalText(9),
            secret: try masterKeys.openText(row.text(10), binding: .webhookSecret(projectID: projectID, webhookID: id)),
            previousSecret: try row.optionalText(11).map {
                try masterKeys.openText($0, binding: .webhookPreviousSecret(projectID: projectID, webhookID: id))
            },
            previousSecretExpiresAt: row.optionalInt(12))
    }

    public func createWebhook(_ webhook: WebhookRecord, origin: EventOrigin) async throws {
        let keys = masterKeys
        let secret = keys.sealText(
            webhook.secret, binding: .webhookSecret(projectID: webhook.projectID, webhookID: webhook.id))
        let previous = webhook.previousSecret.map {
            keys.sealText($0, binding: .webhookPreviousSecret(projectID: webhook.projectID, webhookID: webhook.id))
        }
        _ = try await writer.write { connection in
            try connection.run(
                "INSERT INTO webhooks (\(Self.webhookColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    .init(webhook.id), .init(webhook.projectID), .init(webhook.url), .init(webhook.storedTypes),
                    .init(webhook.description), .init(webhook.enabled), .init(webhook.createdAt),
                    .init(webhook.updatedAt), .init(webhook.disabledAt), .init(webhook.disabledReason),
                    .init(secret), .init(previous), .init(webhook.previousSecretExpiresAt),
                ])
            // Deliveries start with the events committed from here on (its own webhook.created included).
            try connection.run(
                "UPDATE webhooks SET cursor_sequence = \(Self.lastSequence) WHERE id = ?",
                [.init(webhook.projectID), .init(webhook.id)])
            var batch = EventBatch(projectID: webhook.projectID, origin: origin, now: webhook.createdAt)
            batch.append(.webhookCreated(webhook))
            try Self.append(batch, in: connection)
        }
    }

    public func webhook(projectID: String, id: String) async throws -> WebhookRecord? {
        let row = try readers.read {
            try $0.queryFirst(
                "SELECT \(Self.webhookColumns) FROM webhooks WHERE project_id = ? AND id = ?",
                [.init(projectID), .init(id)])
        }
        return try row.map(webhook)
    }

    public func webhooks(projectID: String, afterID: String?, limit: Int) async throws -> [WebhookRecord] {
        let rows = try readers.read {
            try $0.query(
                "SELECT \(Self.webhookColumns) FROM webhooks WHERE project_id = ? AND id > ? ORDER BY id LIMIT ?",
                [.init(projectID), .init(afterID ?? ""), .init(limit)])
        }
        return try rows.map(webhook)
    }

    public func updateWebhook(
        projectID: String, id: String, patch: WebhookPatch, now: Int64, origin: EventOrigin
    ) async throws -> WebhookRecord? {
        try await writer.write { [self] connection -> WebhookRecord? in
            guard
                let old = try connection.queryFirst(
                    "SELECT \(Self.webhookColumns) FROM webhooks WHERE project_id = ? AND id = ?",
                    [.init(projectID), .init(id)]
                ).map(webhook)
            else { return nil }
            if let url = patch.url {
                try connection.run("UPDATE webhooks SET url = ? WHERE id = ?", [.init(url), .init(id)])
            }
            if let types = patch.types {
                try connection.run(
                    "UPDATE webhooks SET types = ? WHERE id = ?",
                    [.init(types.isEmpty ? nil : types.joined(separator: ",")), .init(id)])
            }
            if let description = patch.description {
                try connection.run(
                    "UPDATE webhooks SET description = ? WHERE id = ?", [.init(description), .init(id)])
            }
            if patch.enabled == true {
                // Enabled again: deliveries resume with the events committed from now on (a replay
                // queues the ones in between).
                try connection.run(
                    "UPDATE webhooks SET cursor_sequence = \(Self.lastSequence) WHERE id = ? AND enabled = 0",
                    [.init(projectID), .init(id)])
            }
            if let enabled = patch.enabled {
                try connection.run(
                    enabled
                        ? "UPDATE webhooks SET enabled = 1, disabled_at = NULL, disabled_reason = NULL WHERE id = ?"
                        : """
                        UPDATE webhooks SET enabled = 0, disabled_at = COALESCE(disabled_at, ?),
                            disabled_reason = COALESCE(disabled_reason, 'admin') WHERE id = ?
                        """,
                    enabled ? [.init(id)] : [.init(now), .init(id)])
                if enabled != old.enabled { try Self.park(webhookID: id, enabled: enabled, now: now, in: connection) }
            }
            try connection.run("UPDATE webhooks SET updated_at = ? WHERE id = ?", [.init(now), .init(id)])
            guard
                let updated = try connection.queryFirst(
                    "SELECT \(Self.webhookColumns) FROM webhooks WHERE id = ?", [.init(id)]
                ).map(webhook)
            else { return nil }
            let changed = updated.changed(from: old)
            if !changed.isEmpty {
                var batch = EventBatch(projectID: projectID, origin: origin, now: now)
                batch.append(.webhookUpdated(webhookID: id, changed: changed))
                try Self.append(batch, in: connection)
            }
            return updated
        }
    }

    public func deleteWebhook(projectID: String, id: String, now: Int64, origin: EventOrigin) async throws -> Bool {
        try await writer.write { connection in
            guard
                try connection.run(
                    "DELETE FROM webhooks WHERE project_id = ? AND id = ?", [.init(projectID), .init(id)]) == 1
            else { return false }
            var batch = EventBatch(projectID: projectID, origin: origin, now: now)
            batch.append(.webhookDeleted(webhookID: id))
            try Self.append(batch, in: connection)
            return true
        }
    }

    public func rotateWebhookSecret(
        projectID: String, id: String, newSecret: String, previousExpiresAt: Int64, now: Int64, origin: EventOrigin
    ) async throws -> WebhookRecord? {
        let keys = masterKeys
        let sealed = keys.sealText(newSecret, binding: .webhookSecret(projectID: projectID, webhookID: id))
        let row = try await writer.write { connection -> SQLiteRow? in
            guard
                let current = try connection.queryFirst(
                    "SELECT secret FROM webhooks WHERE project_id = ? AND id = ?", [.init(projectID), .init(id)])
            else { return nil }
            // The outgoing secret is re-sealed under the previous-secret column's binding.
            let plaintext = try keys.openText(
                current.text(0), binding: .webhookSecret(projectID: projectID, webhookID: id))
            let previous = keys.sealText(
                plaintext, binding: .webhookPreviousSecret(projectID: projectID, webhookID: id))
            try connection.run(
                """
                UPDATE webhooks SET secret = ?, previous_secret = ?, previous_secret_expires_at = ?, updated_at = ?
                WHERE id = ?
                """,
                [.init(sealed), .init(previous), .init(previousExpiresAt), .init(now), .init(id)])
            var batch = EventBatch(projectID: projectID, origin: origin, now: now)
            batch.append(.webhookUpdated(webhookID: id, changed: ["secret"]))
            try Self.append(batch, in: connection)
            return try connection.queryFirst("SELECT \(Self.webhookColumns) FROM webhooks WHERE id = ?", [.init(id)])
        }
        return try row.map(webhook)
    }
}
