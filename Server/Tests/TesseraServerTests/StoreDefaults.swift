@testable import TesseraServer

/// The store's writes with the actor of the tests that do not look at events: the server itself.
///
/// Production code always passes its caller's origin; only the tests use these.
extension TesseraStore {
    func updateProjectSettings(projectID: String, settings: ProjectSettings, now: Int64) async throws
        -> ProjectRecord?
    {
        try await updateProjectSettings(projectID: projectID, settings: settings, now: now, origin: .system)
    }

    func addIdentitySecret(projectID: String, secret: IdentitySecretRecord, limit: Int) async throws {
        try await addIdentitySecret(projectID: projectID, secret: secret, limit: limit, origin: .system)
    }

    func deleteIdentitySecret(projectID: String, kid: String) async throws -> Bool {
        try await deleteIdentitySecret(projectID: projectID, kid: kid, now: 0, origin: .system)
    }

    func rotateSessionKey(projectID: String, newKey: SessionKeyRecord, now: Int64) async throws {
        try await rotateSessionKey(projectID: projectID, newKey: newKey, now: now, origin: .system)
    }

    func revokeSession(sessionID: String, profileID: String?, now: Int64) async throws -> Bool {
        try await revokeSession(sessionID: sessionID, profileID: profileID, now: now, reason: .revoked, origin: .system)
    }

    func revokeSessions(projectID: String, profileID: String, now: Int64) async throws -> Int? {
        try await revokeSessions(projectID: projectID, profileID: profileID, now: now, origin: .system)
    }

    func registerDevice(_ device: DeviceRecord) async throws -> DeviceRecord {
        try await registerDevice(device, origin: .system)
    }

    func deleteDevice(deviceID: String, profileID: String) async throws -> Bool {
        try await deleteDevice(deviceID: deviceID, profileID: profileID, now: 0, origin: .system)
    }

    func eraseProfile(projectID: String, profileID: String) async throws -> Bool {
        try await eraseProfile(projectID: projectID, profileID: profileID, now: 0, origin: .system)
    }

    func setProfileBlocked(projectID: String, profileID: String, blocked: Bool, reason: String?, now: Int64)
        async throws -> ProfileRecord?
    {
        try await setProfileBlocked(
            projectID: projectID, profileID: profileID, blocked: blocked, reason: reason, now: now, origin: .system)
    }

    func rotateAPIKey(projectID: String, kind: APIKeyKind, newKeyHash: [UInt8], graceUntil: Int64, now: Int64)
        async throws -> Bool
    {
        try await rotateAPIKey(
            projectID: projectID, kind: kind, newKeyHash: newKeyHash, graceUntil: graceUntil, now: now,
            origin: .system)
    }

    func createWebhook(_ webhook: WebhookRecord) async throws {
        try await createWebhook(webhook, origin: .system)
    }

    func updateWebhook(projectID: String, id: String, patch: WebhookPatch, now: Int64) async throws
        -> WebhookRecord?
    {
        try await updateWebhook(projectID: projectID, id: id, patch: patch, now: now, origin: .system)
    }

    func deleteWebhook(projectID: String, id: String) async throws -> Bool {
        try await deleteWebhook(projectID: projectID, id: id, now: 0, origin: .system)
    }

    func rotateWebhookSecret(projectID: String, id: String, newSecret: String, previousExpiresAt: Int64, now: Int64)
        async throws -> WebhookRecord?
    {
        try await rotateWebhookSecret(
            projectID: projectID, id: id, newSecret: newSecret, previousExpiresAt: previousExpiresAt, now: now,
            origin: .system)
    }
}
