import PostgresNIO

/// Webhook endpoints, their secrets sealed under the master key.
extension PostgresStore {

    static func webhook(_ row: PostgresCells, keys masterKeys: MasterKeyring) throws -> WebhookRecord {
        let (id, projectID) = (try row.text(0), try row.text(1))
        return WebhookRecord(
            id: id, projectID: projectID, url: try row.text(2),
            types: WebhookRecord.types(stored: try row.optionalText(3)), description: try row.optionalText(4),
            enabled: try row.bool(5), createdAt: try row.int(6), updatedAt: try row.int(7),
            disabledAt: try row.optionalInt(8), disabledReason: try row.optionalText(9),
            secret: try masterKeys.openText(
                try row.text(10), binding: .webhookSecret(projectID: projectID, webhookID: id)),
            previousSecret: try row.optionalText(11).map {
                try masterKeys.openText($0, binding: .webhookPreviousSecret(projectID: projectID, webhookID: id))
            },
            previousSecretExpiresAt: try row.optionalInt(12))
    }

    public func createWebhook(_ webhook: WebhookRecord, origin: EventOrigin) async throws {
        // The events committed before the endpoint exists are numbered first, so that its cursor
        // (the project's last sequence) is past them: they are never delivered to it.
        try await sequenceEvents(projectID: webhook.projectID)
        let logger = logger
        let keys = masterKeys
        let secret = keys.sealText(
            webhook.secret, binding: .webhookSecret(projectID: webhook.projectID, webhookID: webhook.id))
        let previous = webhook.previousSecret.map {
            keys.sealText($0, binding: .webhookPreviousSecret(projectID: webhook.projectID, webhookID: webhook.id))
        }
        try await transaction { connection in
            // Deliveries start with the events committed from here on (its own webhook.created included).
            try await connection.rows(
                """
                INSERT INTO webhooks (\(unescaped: Self.webhookColumns), cursor_sequence)
                VALUES (\(webhook.id), \(webhook.projectID), \(webhook.url), \(webhook.storedTypes),
                    \(webhook.description), \(webhook.enabled), \(webhook.createdAt), \(webhook.updatedAt),
                    \(webhook.disabledAt), \(webhook.disabledReason), \(secret), \(previous),
                    \(webhook.previousSecretExpiresAt),
                    COALESCE((SELECT last_sequence FROM event_counters WHERE project_id = \(webhook.projectID)), 0))
                """, logger: logger)
            var batch = EventBatch(projectID: webhook.projectID, origin: origin, now: webhook.createdAt)
            batch.append(.webhookCreated(webhook))
            try await Self.append(batch, in: connection, logger: logger)
        }
    }

    public func webhook(projectID: String, id: String) async throws -> WebhookRecord? {
        let logger = logger
        let keys = masterKeys
        return try await statement { client in
            try await client.first(
                """
                SELECT \(unescaped: Self.webhookColumns) FROM webhooks WHERE project_id = \(projectID) AND id = \(id)
                """, logger: logger
            ).map { try Self.webhook($0, keys: keys) }
        }
    }

    public func webhooks(projectID: String, afterID: String?, limit: Int) async throws -> [WebhookRecord] {
        let logger = logger
        let after = afterID ?? ""
        let keys = masterKeys
        return try await statement { client in
            try await client.rows(
                """
                SELECT \(unescaped: Self.webhookColumns) FROM webhooks
                WHERE project_id = \(projectID) AND id > \(after) ORDER BY id LIMIT \(Int64(limit))
                """, logger: logger
            ).map { try Self.webhook($0, keys: keys) }
        }
    }

    public func updateWebhook(
        projectID: String, id: String, patch: WebhookPatch, now: Int64, origin: EventOrigin
    ) async throws -> WebhookRecord? {
        // Enabling resumes from the events committed from now on: number the earlier ones first.
        if patch.enabled == true { try await sequenceEvents(projectID: projectID) }
        let logger = logger
        let setURL = patch.url != nil
        let setTypes = patch.types != nil
        let types = patch.types.flatMap { $0.isEmpty ? nil : $0.joined(separator: ",") }
        let setDescription = patch.description != nil
        let description = patch.description ?? nil
        let enabled = patch.enabled
        let keys = masterKeys
        return try await transaction { connection -> WebhookRecord? in
            guard
                let old = try await connection.first(
                    """
                    SELECT \(unescaped: Self.webhookColumns) FROM webhooks
                    WHERE project_id = \(projectID) AND id = \(id) FOR UPDATE
                    """, logger: logger
                ).map({ try Self.webhook($0, keys: keys) })
            else { return nil }
            guard
                let updated = try await connection.first(
                    """
                    UPDATE webhooks SET
                        url = CASE WHEN \(setURL)::boolean THEN \(patch.url ?? "")::text ELSE url END,
                        types = CASE WHEN \(setTypes)::boolean THEN \(types)::text ELSE types END,
                        description = CASE WHEN \(setDescription)::boolean THEN \(description)::text ELSE description END,
                        cursor_sequence = CASE WHEN \(enabled)::boolean AND NOT enabled
                            THEN COALESCE((SELECT last_sequence FROM event_counters WHERE project_id = \(projectID)), 0)
                            ELSE cursor_sequence END,
                        enabled = COALESCE(\(enabled)::boolean, enabled),
                        disabled_at = CASE WHEN \(enabled)::boolean IS NULL THEN disabled_at
                            WHEN \(enabled)::boolean THEN NULL ELSE COALESCE(disabled_at, \(now)::bigint) END,
                        disabled_reason = CASE WHEN \(enabled)::boolean IS NULL THEN disabled_reason
                            WHEN \(enabled)::boolean THEN NULL ELSE COALESCE(disabled_reason, 'admin') END,
                        updated_at = \(now)
                    WHERE project_id = \(projectID) AND id = \(id)
                    RETURNING \(unescaped: Self.webhookColumns)
                    """, logger: logger
                ).map({ try Self.webhook($0, keys: keys) })
            else { return nil }
            if updated.enabled != old.enabled {
                try await Self.park(
                    webhookID: id, enabled: updated.enabled, now: now, in: connection, logger: logger)
            }
            let changed = updated.changed(from: old)
            if !changed.isEmpty {
                var batch = EventBatch(projectID: projectID, origin: origin, now: now)
                batch.append(.webhookUpdated(webhookID: id, changed: changed))
                try await Self.append(batch, in: connection, logger: logger)
            }
            return updated
        }
    }

    public func deleteWebhook(projectID: String, id: String, now: Int64, origin: EventOrigin) async throws -> Bool {
        let logger = logger
        return try await transaction { connection in
            guard
                try await connection.rows(
                    "DELETE FROM webhooks WHERE project_id = \(projectID) AND id = \(id) RETURNING id", logger: logger
                ).count == 1
            else { return false }
            var batch = EventBatch(projectID: projectID, origin: origin, now: now)
            batch.append(.webhookDeleted(webhookID: id))
            try await Self.append(batch, in: connection, logger: logger)
            return true
        }
    }

    public func rotateWebhookSecret(
        projectID: String, id: String, newSecret: String, previousExpiresAt: Int64, now: Int64, origin: EventOrigin
    ) async throws -> WebhookRecord? {
        let logger = logger
        let keys = masterKeys
        let sealed = keys.sealText(newSecret, binding: .webhookSecret(projectID: projectID, webhookID: id))
        return try await transaction { connection -> WebhookRecord? in
            guard
                let current = try await connection.first(
                    "SELECT secret FROM webhooks WHERE project_id = \(projectID) AND id = \(id) FOR UPDATE",
                    logger: logger)
            else { return nil }
            // The outgoing secret is re-sealed under the previous-secret column's binding.
            let plaintext = try keys.openText(
                try current.text(0), binding: .webhookSecret(projectID: projectID, webhookID: id))
            let previous = keys.sealText(
                plaintext, binding: .webhookPreviousSecret(projectID: projectID, webhookID: id))
            let rotated = try await connection.first(
                """
                UPDATE webhooks SET secret = \(sealed), previous_secret = \(previous),
                    previous_secret_expires_at = \(previousExpiresAt), updated_at = \(now)
                WHERE id = \(id)
                RETURNING \(unescaped: Self.webhookColumns)
                """, logger: logger
            ).map { try Self.webhook($0, keys: keys) }
            var batch = EventBatch(projectID: projectID, origin: origin, now: now)
            batch.append(.webhookUpdated(webhookID: id, changed: ["secret"]))
            try await Self.append(batch, in: connection, logger: logger)
            return rotated
        }
    }
}
