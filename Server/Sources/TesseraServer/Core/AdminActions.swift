import TesseraTokens

/// The changes an administrator makes to a project, whoever makes them: the admin API (with the
/// project's secret key) and the operator console (an operator) call the same methods, so both
/// check the same rules, change the same rows and leave the same audit events. Only the
/// ``EventOrigin`` differs.
///
/// Every method throws a ``CoreError`` for bad input or an unknown target, and then has changed
/// nothing.
struct AdminActions: Sendable {
    let core: TesseraCore

    private var now: Int64 { core.currentTime().seconds }

    // MARK: Sessions and devices

    /// Ends one session of the project (idempotent for a session that already ended); `not_found`
    /// for an unknown session or another project's.
    func endSession(_ runtime: ProjectRuntime, sessionID: String, origin: EventOrigin) async throws {
        guard InputRules.isIdentifier(sessionID, prefix: "ses_"),
            let target = try await core.store.sessionContext(sessionID: sessionID),
            target.session.projectID == runtime.id
        else { throw CoreError.notFound }
        let revoked = try await core.store.revokeSession(
            sessionID: sessionID, profileID: target.session.profileID, now: now, reason: .admin, origin: origin)
        core.sessions.ended(sessionID: sessionID)
        // Nothing ended: the session had ended already (idempotent), or it is gone, its profile erased
        // or merged since the read above, and then it is not found, as it would be a moment later.
        if !revoked, try await core.store.sessionContext(sessionID: sessionID) == nil { throw CoreError.notFound }
    }

    /// Ends every live session of a profile (by ID or alias) of the project; returns how many ended.
    @discardableResult
    func endSessions(_ runtime: ProjectRuntime, profileID: String, origin: EventOrigin) async throws -> Int {
        guard
            let count = try await core.store.revokeSessions(
                projectID: runtime.id, profileID: profileID, now: now, origin: origin)
        else { throw CoreError.notFound }
        return count
    }

    /// Removes a device (its push token) of a profile of the project; `not_found` when unknown.
    func removeDevice(_ runtime: ProjectRuntime, profileID: String, deviceID: String, origin: EventOrigin)
        async throws
    {
        let profile = try await profile(runtime, id: profileID)
        guard InputRules.isIdentifier(deviceID, prefix: "dev_"),
            try await core.store.deleteDevice(deviceID: deviceID, profileID: profile.id, now: now, origin: origin)
        else { throw CoreError.notFound }
    }

    // MARK: Profiles

    /// The profile of the project with this ID or alias; `not_found` otherwise.
    func profile(_ runtime: ProjectRuntime, id: String) async throws -> ProfileRecord {
        guard let profile = try await core.store.profile(projectID: runtime.id, id: id) else {
            throw CoreError.notFound
        }
        return profile
    }

    /// Blocks or unblocks a profile; a block ends its sessions and devices. `reason` is at most
    /// 500 characters without control characters.
    func setBlocked(
        _ runtime: ProjectRuntime, profileID: String, blocked: Bool, reason: String?, origin: EventOrigin
    ) async throws -> ProfileRecord {
        if let reason {
            // Counted in code points, as JSON Schema's maxLength counts them.
            guard reason.unicodeScalars.count <= 500,
                !reason.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else {
                throw CoreError.invalidRequest("reason must be at most 500 characters without control characters.")
            }
        }
        guard
            let profile = try await core.store.setProfileBlocked(
                projectID: runtime.id, profileID: profileID, blocked: blocked, reason: reason, now: now,
                origin: origin)
        else { throw CoreError.notFound }
        return profile
    }

    /// Erases a profile (by ID or alias) with its aliases, sessions and devices; `not_found` when unknown.
    func erase(_ runtime: ProjectRuntime, profileID: String, origin: EventOrigin) async throws {
        guard try await core.store.eraseProfile(projectID: runtime.id, profileID: profileID, now: now, origin: origin)
        else { throw CoreError.notFound }
    }

    // MARK: Settings

    /// Changes the project's settings as its locked row holds them (`change` is given the locked
    /// project and answers the new settings), checks them and saves them; answers the saved project.
    ///
    /// A patch applies only its own members to the row as locked, never to a cached copy: two
    /// patches of different settings sent at once both stay.
    func updateSettings(
        _ runtime: ProjectRuntime, origin: EventOrigin,
        change: @escaping @Sendable (ProjectRecord) throws -> ProjectSettings
    ) async throws -> ProjectRecord {
        guard
            let project = try await core.store.updateProjectSettings(
                projectID: runtime.id, now: now, origin: origin,
                change: { locked in
                    let settings = try change(locked)
                    try Self.check(settings)
                    return settings
                })
        else { throw CoreError.notFound }
        core.projects.invalidate(projectID: runtime.id)
        return project
    }

    /// The rules of every setting, with the messages the admin API answers.
    static func check(_ settings: ProjectSettings) throws(CoreError) {
        if let issuer = settings.expectedIssuer, !InputRules.isIssuer(issuer) {
            throw CoreError.invalidRequest(
                "expected_issuer must be 1 to 2048 bytes without control characters, or null.")
        }
        guard ProjectSettings.identityTokenLifetimeRange.contains(settings.maxIdentityTokenLifetimeSeconds) else {
            throw CoreError.invalidRequest("max_identity_token_lifetime_seconds must be between 1 and 86400.")
        }
        guard ProjectSettings.leewayRange.contains(settings.leewaySeconds) else {
            throw CoreError.invalidRequest("leeway_seconds must be between 0 and 600.")
        }
        for (value, name) in [
            (settings.anonymousSessionMinutes, "anonymous_session_minutes"),
            (settings.identifiedSessionMinutes, "identified_session_minutes"),
        ] where !ProjectSettings.sessionMinutesRange.contains(value) {
            throw CoreError.invalidRequest("\(name) must be between 5 and 525600.")
        }
        if let limit = settings.maxSessionsPerProfile, !ProjectSettings.maxSessionsPerProfileRange.contains(limit) {
            throw CoreError.invalidRequest("max_sessions_per_profile must be between 1 and 1000, or null (unlimited).")
        }
        try settings.appAttest.check()
    }

    // MARK: Keys

    /// Adds an identity secret (at most three); answers it with its value, shown once.
    func createIdentitySecret(_ runtime: ProjectRuntime, origin: EventOrigin) async throws -> IdentitySecretRecord {
        let secret = IdentitySecret.generate()
        let record = IdentitySecretRecord(kid: secret.kid, value: secret.value, createdAt: now)
        try await core.store.addIdentitySecret(projectID: runtime.id, secret: record, limit: 3, origin: origin)
        core.projects.invalidate(projectID: runtime.id)
        return record
    }

    /// Deletes an identity secret; `not_found` when unknown, `last_identity_secret` for the only one.
    func deleteIdentitySecret(_ runtime: ProjectRuntime, kid: String, origin: EventOrigin) async throws {
        guard try await core.store.deleteIdentitySecret(projectID: runtime.id, kid: kid, now: now, origin: origin)
        else { throw CoreError.notFound }
        core.projects.invalidate(projectID: runtime.id)
    }

    /// Makes a new ES256 key the signing key; the old one stays in the JWKS until every JWT it
    /// signed has expired.
    func rotateSigningKey(_ runtime: ProjectRuntime, origin: EventOrigin) async throws -> SessionKeyRecord {
        let now = now
        let key = SessionSigningKey.generate()
        let record = SessionKeyRecord(kid: key.kid, privateKey: key.privateKeyRawRepresentation, createdAt: now)
        try await core.store.rotateSessionKey(projectID: runtime.id, newKey: record, now: now, origin: origin)
        core.projects.invalidate(projectID: runtime.id)
        return record
    }

    /// A new API key of `kind`, shown once; the old one keeps working for `graceSeconds` (0 to 30 days).
    func rotateAPIKey(_ runtime: ProjectRuntime, kind: APIKeyKind, graceSeconds: Int64, origin: EventOrigin)
        async throws -> RotatedAPIKey
    {
        guard (0...maximumAPIKeyGraceSeconds).contains(graceSeconds) else {
            throw CoreError.invalidRequest("grace_seconds must be between 0 and \(maximumAPIKeyGraceSeconds).")
        }
        let now = now
        let key = kind == .publishable ? OpaqueToken.publishableKey() : OpaqueToken.secretKey()
        guard
            try await core.store.rotateAPIKey(
                projectID: runtime.id, kind: kind, newKeyHash: OpaqueToken.sha256(key), graceUntil: now + graceSeconds,
                now: now, origin: origin)
        else { throw CoreError.notFound }
        core.projects.invalidate(projectID: runtime.id)
        // The hint is for people (the Keys page); the rotation stands without it.
        try? await core.store.saveAPIKeyHint(
            projectID: runtime.id, keyHash: OpaqueToken.sha256(key), hint: ProjectProvisioner.hint(kind: kind, key: key)
        )
        return RotatedAPIKey(kind: kind, key: key, createdAt: now, previousKeyExpiresAt: now + graceSeconds)
    }

    // MARK: Webhooks

    /// Adds a webhook; answers it with its signing secret, shown once.
    func createWebhook(
        _ runtime: ProjectRuntime, url: String, types: [String], description: String?, origin: EventOrigin
    ) async throws -> (webhook: WebhookRecord, secret: String) {
        let url = try WebhookRules.url(url, allowInsecure: core.configuration.allowInsecureWebhooks)
        let types = try WebhookRules.types(types)
        let description = try WebhookRules.description(description)
        let now = now
        let secret = WebhookSecret.generate().text
        let record = WebhookRecord(
            id: OpaqueToken.identifier(prefix: "whk_"), projectID: runtime.id, url: url, types: types,
            description: description, enabled: true, createdAt: now, updatedAt: now, secret: secret)
        try await core.store.createWebhook(record, origin: origin)
        return (record, secret)
    }

    /// Applies a patch to a webhook after checking its URL, types and description.
    func updateWebhook(_ runtime: ProjectRuntime, id: String, patch: WebhookPatch, origin: EventOrigin) async throws
        -> WebhookRecord
    {
        var patch = patch
        if let url = patch.url {
            patch.url = try WebhookRules.url(url, allowInsecure: core.configuration.allowInsecureWebhooks)
        }
        if let types = patch.types { patch.types = try WebhookRules.types(types) }
        if let description = patch.description { patch.description = .some(try WebhookRules.description(description)) }
        guard InputRules.isIdentifier(id, prefix: "whk_"),
            let webhook = try await core.store.updateWebhook(
                projectID: runtime.id, id: id, patch: patch, now: now, origin: origin)
        else { throw CoreError.notFound }
        return webhook
    }

    /// Deletes a webhook with its deliveries.
    func deleteWebhook(_ runtime: ProjectRuntime, id: String, origin: EventOrigin) async throws {
        guard InputRules.isIdentifier(id, prefix: "whk_"),
            try await core.store.deleteWebhook(projectID: runtime.id, id: id, now: now, origin: origin)
        else { throw CoreError.notFound }
    }

    /// How long a rotated-out webhook secret keeps signing beside the new one.
    static let previousWebhookSecretSeconds: Int64 = 86_400

    /// A new signing secret for a webhook, shown once; the old one signs beside it for 24 hours.
    func rotateWebhookSecret(_ runtime: ProjectRuntime, id: String, origin: EventOrigin) async throws -> String {
        let now = now
        let secret = WebhookSecret.generate().text
        guard InputRules.isIdentifier(id, prefix: "whk_"),
            try await core.store.rotateWebhookSecret(
                projectID: runtime.id, id: id, newSecret: secret,
                previousExpiresAt: now + Self.previousWebhookSecretSeconds, now: now, origin: origin) != nil
        else { throw CoreError.notFound }
        return secret
    }

    /// Queues one event again for a webhook; answers how many were queued (0: the feed no longer holds it).
    func replayWebhookEvent(_ runtime: ProjectRuntime, webhookID: String, eventID: String) async throws -> Int {
        guard InputRules.isIdentifier(eventID, prefix: "evt_") else {
            throw CoreError.invalidRequest("event_id is not an event ID.")
        }
        // The webhook is judged in the store's transaction that queues, not by a read before it: one
        // deleted meanwhile is not found, never a delivery of nothing or a database failure.
        guard InputRules.isIdentifier(webhookID, prefix: "whk_"),
            let found = try await core.store.replayWebhookEvent(
                projectID: runtime.id, webhookID: webhookID, eventID: eventID, now: now)
        else { throw CoreError.notFound }
        return found ? 1 : 0
    }

    /// Queues again every event of the webhook's types after `afterSequence`; answers how many.
    func replayWebhookEvents(_ runtime: ProjectRuntime, webhookID: String, afterSequence: Int64) async throws -> Int {
        guard afterSequence >= 0 else { throw CoreError.invalidRequest("after must be a sequence, 0 or more.") }
        guard InputRules.isIdentifier(webhookID, prefix: "whk_"),
            let count = try await core.store.replayWebhookEvents(
                projectID: runtime.id, webhookID: webhookID, afterSequence: afterSequence, now: now)
        else { throw CoreError.notFound }
        return count
    }

    /// Queues a `webhook.test` event (not in the feed) for a webhook; answers its event ID.
    func sendTestEvent(_ runtime: ProjectRuntime, webhookID: String, actor: EventActor) async throws -> String {
        guard InputRules.isIdentifier(webhookID, prefix: "whk_") else { throw CoreError.notFound }
        let now = now
        let event = EventRecord(
            id: OpaqueToken.identifier(prefix: "evt_"), projectID: runtime.id, sequence: 0, type: "webhook.test",
            createdAt: now, actor: actor, clientAddress: nil, profileID: nil,
            data: "{\"webhook_id\":\"\(webhookID)\"}")
        var writer = JSONWriter()
        writer.event(event)
        guard
            try await core.store.queueWebhookTest(
                projectID: runtime.id, webhookID: webhookID, event: event,
                body: String(decoding: writer.bytes, as: UTF8.self), now: now)
        else { throw CoreError.notFound }
        return event.id
    }
}

/// A new API key, shown once, and when the key it replaced stops working.
struct RotatedAPIKey: Sendable {
    var kind: APIKeyKind
    var key: String
    var createdAt: Int64
    var previousKeyExpiresAt: Int64
}
