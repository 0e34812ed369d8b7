import Hummingbird
import TesseraTokens

private struct IntrospectBody: RequestBody {
    /// None judged: like the identity token at identify, a credential is judged by its verifier, and a
    /// string that is no session credential of the project (control characters included) is `active: false`.
    static let readMembers: Set<String>? = []
    var sessionToken: String?
    var sessionJWT: String?

    enum CodingKeys: String, CodingKey {
        case sessionToken = "session_token"
        case sessionJWT = "session_jwt"
    }
}

private struct BlockBody: RequestBody {
    static let readMembers: Set<String>? = ["reason"]
    var reason: String?
}

private struct RotateAPIKeyBody: RequestBody {
    static let readMembers: Set<String>? = ["kind", "grace_seconds"]
    var kind: String
    var graceSeconds: Int64?

    enum CodingKeys: String, CodingKey {
        case kind
        case graceSeconds = "grace_seconds"
    }
}

/// The longest grace period of a rotated API key: 30 days.
let maximumAPIKeyGraceSeconds: Int64 = 2_592_000

extension AdminController {
    // MARK: Identity secrets

    /// `GET /v1/admin/identity-secrets`
    func listIdentitySecrets(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let secrets = try await core.store.identitySecrets(projectID: runtime.id)
        return .jsonObjects("identity_secrets", secrets) { writer, secret in
            writer.field("kid", secret.kid)
            writer.time("created_at", secret.createdAt)
            writer.time("last_used_at", secret.lastUsedAt)
        }
    }

    // MARK: Sessions

    /// `POST /v1/admin/sessions/introspect`: whether a session token or session JWT is active now,
    /// for a session of the key's project (RFC 7662 style: anything else is just `active: false`).
    func introspect(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let body = try await bodies.decode(IntrospectBody.self, from: request)
        let now = core.currentTime()
        var found: SessionContext?
        switch (body.sessionToken, body.sessionJWT) {
        case (let token?, nil):
            if token.hasPrefix("st_"), token.utf8.count <= 512 {
                found = try await core.store.sessionContext(tokenHash: OpaqueToken.sha256(token))
            }
        case (nil, let jwt?):
            // Verified with this project's keys only: another project's JWT does not verify.
            if jwt.utf8.count <= 8192,
                let claims = try? runtime.keyRing.verify(
                    jwt, now: now.date, leeway: Double(core.configuration.sessionJWTLeewaySeconds))
            {
                found = try await core.store.sessionContext(sessionID: claims.sessionID)
                if found?.profile.id != claims.subject { found = nil }
            }
        default:
            throw CoreError.invalidRequest("Send exactly one of session_token and session_jwt (a string).")
        }
        guard let found, found.session.projectID == runtime.id, found.session.isAlive(now: now.seconds) else {
            return .json { writer in
                writer.objectStart()
                writer.field("active", false)
                writer.objectEnd()
            }
        }
        return .json { writer in
            writer.objectStart()
            writer.field("active", true)
            writer.key("session")
            writer.session(found.session)
            writer.key("profile")
            writer.profile(found.profile, admin: true)
            writer.key("capabilities")
            writer.capabilities(found.session)
            writer.objectEnd()
        }
    }

    /// `DELETE /v1/admin/sessions/{session_id}`: ends a session of the key's project (idempotent
    /// for a session that already ended); 404 for an unknown session or another project's.
    func deleteSession(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        try await noContent("session_id", request, context) { try await $0.endSession($1, sessionID: $2, origin: $3) }
    }

    // MARK: Blocking

    /// `POST /v1/admin/profiles/{profile_id}/block`
    func blockProfile(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let profileID = try context.parameters.require("profile_id")
        let runtime = try context.project()
        let body = try await bodies.decodeIfPresent(BlockBody.self, from: request)
        // The reason is the profile's and the audit entry's.
        var origin = addresses.secretKeyOrigin(request, context: context)
        origin.reason = body?.reason
        return try await setBlocked(
            runtime: runtime, profileID: profileID, blocked: true, reason: body?.reason, origin: origin)
    }

    /// `POST /v1/admin/profiles/{profile_id}/unblock`
    func unblockProfile(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let profileID = try context.parameters.require("profile_id")
        let runtime = try context.project()
        return try await setBlocked(
            runtime: runtime, profileID: profileID, blocked: false, reason: nil,
            origin: addresses.secretKeyOrigin(request, context: context))
    }

    private func setBlocked(
        runtime: ProjectRuntime, profileID: String, blocked: Bool, reason: String?, origin: EventOrigin
    ) async throws -> Response {
        let profile = try await AdminActions(core: core).setBlocked(
            runtime, profileID: profileID, blocked: blocked, reason: reason, origin: origin)
        return .json { writer in
            writer.objectStart()
            writer.key("profile")
            writer.profile(profile, admin: true)
            writer.objectEnd()
        }
    }

    // MARK: Signing keys

    /// `GET /v1/admin/signing-keys`: the session-JWT signing keys, never their private parts.
    func listSigningKeys(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let keys = try await core.store.sessionKeys(projectID: runtime.id)
        let now = core.currentTime().seconds
        let current = keys.last(where: { $0.retiredAt == nil })?.kid
        // The current key first, then the retired ones, most recently retired first (keys made
        // within one second have equal created_at, so that alone does not order them).
        let ordered = keys.sorted { ($0.retiredAt ?? .max, $0.createdAt) > ($1.retiredAt ?? .max, $1.createdAt) }
        return .jsonObjects("signing_keys", ordered) { writer, key in
            writer.field("kid", key.kid)
            writer.field("algorithm", "ES256")
            writer.time("created_at", key.createdAt)
            writer.time("retired_at", key.retiredAt)
            let status: String
            if key.kid == current {
                status = "current"
            } else if let retiredAt = key.retiredAt, retiredAt + core.retiredSigningKeyWindow > now {
                status = "retired"
            } else {
                status = "expired"
            }
            writer.field("status", status)
            writer.time("published_until", key.retiredAt.map { $0 + core.retiredSigningKeyWindow })
        }
    }

    /// `POST /v1/admin/signing-keys/rotate`: a new ES256 key signs from now on; the old one stays in
    /// the JWKS until every JWT it signed has expired.
    func rotateSigningKey(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let record = try await AdminActions(core: core).rotateSigningKey(
            try context.project(), origin: addresses.secretKeyOrigin(request, context: context))
        return .json(.created) { writer in
            writer.objectStart()
            writer.key("signing_key")
            writer.objectStart()
            writer.field("kid", record.kid)
            writer.field("algorithm", "ES256")
            writer.time("created_at", record.createdAt)
            writer.time("retired_at", nil)
            writer.field("status", "current")
            writer.time("published_until", nil)
            writer.objectEnd()
            writer.objectEnd()
        }
    }

    // MARK: API keys

    /// `POST /v1/admin/api-keys/rotate`: a new key of the kind, shown once; the old one keeps working
    /// until the grace period ends.
    func rotateAPIKey(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let body = try await bodies.decode(RotateAPIKeyBody.self, from: request)
        guard let kind = APIKeyKind(rawValue: body.kind) else {
            throw CoreError.invalidRequest("kind must be publishable or secret.")
        }
        let rotated = try await AdminActions(core: core).rotateAPIKey(
            runtime, kind: kind, graceSeconds: body.graceSeconds ?? 86_400,
            origin: addresses.secretKeyOrigin(request, context: context))
        return .json(.created) { writer in
            writer.objectStart()
            writer.key("api_key")
            writer.objectStart()
            writer.field("kind", rotated.kind.rawValue)
            writer.field("key", rotated.key)
            writer.time("created_at", rotated.createdAt)
            writer.time("previous_key_expires_at", rotated.previousKeyExpiresAt)
            writer.objectEnd()
            writer.objectEnd()
        }
    }
}
