import Foundation
import TesseraTokens

@testable import TesseraServer

/// The store's two session-creating commands with fresh IDs, for the suites that drive a store
/// directly (the store conformance and event suites).
extension TestEnvironment {
    /// The store, the project's ID and the clock's now: what the store suites start from.
    var storeProjectNow: (store: any TesseraStore, projectID: String, now: Int64) {
        (store, project.project.id, clock.seconds)
    }

    /// Makes an environment (as ``make(backend:settings:store:configure:)``) and answers it with its
    /// store, project ID and now, the four names a store test starts from.
    static func makeUnpacked(backend: StoreBackend) async throws -> (
        TestEnvironment, store: any TesseraStore, projectID: String, now: Int64
    ) {
        let environment = try await make(backend: backend)
        let (store, projectID, now) = environment.storeProjectNow
        return (environment, store, projectID, now)
    }

    /// A new session of `kind` in this environment's project, from the clock's now, created by
    /// `client`, and its token's hash.
    func newSession(kind: SessionRecord.Kind = .anonymous, minutes: Int64 = 60, client: SessionClient? = nil)
        -> (SessionRecord, [UInt8])
    {
        let now = clock.seconds
        var session = SessionRecord(
            id: OpaqueToken.identifier(prefix: "ses_"), projectID: project.project.id, profileID: "",
            installationID: nil, kind: kind, createdAt: now, lastAuthenticatedAt: now, expiresAt: now + minutes * 60)
        session.client = client
        return (session, OpaqueToken.sha256(OpaqueToken.sessionToken()))
    }

    /// An anonymous start of `installationID` straight on the store, by `client` when given.
    func storeStart(
        installationID: String = UUID().uuidString.lowercased(),
        secretHash: [UInt8] = OpaqueToken.sha256(OpaqueToken.installationSecret()), minutes: Int64 = 60,
        client: SessionClient? = nil, rateLimit: RateLimitCharge? = nil,
        origin: EventOrigin = EventOrigin(actor: .sdk(sessionID: nil), clientAddress: nil)
    ) async throws -> AnonymousStartResult {
        let (session, hash) = newSession(minutes: minutes, client: client)
        return try await store.startAnonymousSession(
            AnonymousStart(
                projectID: project.project.id, installationID: installationID, installationSecretHash: secretHash,
                newProfileID: OpaqueToken.identifier(prefix: "usr_"), newSession: session, sessionTokenHash: hash,
                rateLimit: rateLimit, origin: origin))
    }

    /// A webhook of this environment's project for `types` (every type when empty), stored directly
    /// at the clock's now.
    @discardableResult
    func storeWebhook(types: [String] = []) async throws -> WebhookRecord {
        let now = clock.seconds
        let record = WebhookRecord(
            id: OpaqueToken.identifier(prefix: "whk_"), projectID: project.project.id,
            url: "https://receiver.example/hook", types: types, description: nil, enabled: true, createdAt: now,
            updatedAt: now, secret: WebhookSecret.generate().text)
        try await store.createWebhook(record)
        return record
    }

    /// A verified identify of `externalID` straight on the store, from the caller's session when given.
    func storeIdentify(
        externalID: String, caller: String? = nil, jti: String? = nil, name: String? = nil, email: String? = nil
    ) async throws -> IdentifyResult {
        let (session, hash) = newSession(kind: .verified)
        return try await store.identify(
            IdentifyCommand(
                projectID: project.project.id, callerSessionID: caller, externalID: externalID, verified: true,
                name: name, avatarURL: nil, email: email, tokenID: jti.map { ($0, clock.seconds + 60) },
                newProfileID: OpaqueToken.identifier(prefix: "usr_"), newSession: session, sessionTokenHash: hash,
                now: clock.seconds))
    }
}
