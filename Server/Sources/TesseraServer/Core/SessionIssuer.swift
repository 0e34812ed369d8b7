import Foundation
import TesseraTokens

/// Issues sessions: a new session record with its token, the length a session gets, and the
/// session JWT that states a session as of now.
struct SessionIssuer: Sendable {
    /// The `iss` of session JWTs.
    let issuer: String
    /// How long a session JWT lives (never past its session).
    let jwtLifetimeSeconds: Int64
    /// Session JWTs signed in the current second, by session.
    let jwtCache = SessionJWTCache()

    /// A new session for `projectID`, with its token; the store fills in profile and installation.
    func newSession(projectID: String, kind: SessionRecord.Kind, minutes: Int64, now: Int64) -> (
        record: SessionRecord, token: String, tokenHash: [UInt8]
    ) {
        let token = OpaqueToken.sessionToken()
        let record = SessionRecord(
            id: TimeOrderedID.make(prefix: "ses_"), projectID: projectID, profileID: "", installationID: nil,
            kind: kind, createdAt: now, lastAuthenticatedAt: now, expiresAt: now + minutes * 60)
        return (record, token, OpaqueToken.sha256(token))
    }

    /// A new session (as ``newSession(projectID:kind:minutes:now:)``) bound to the request's device
    /// key (RFC 9449), with the key tier the client declares.
    func newSession(
        runtime: ProjectRuntime, kind: SessionRecord.Kind, minutes: Int64, now: Int64, proof: DPoPProof?,
        keyTier: String?
    ) throws -> (record: SessionRecord, token: String, tokenHash: [UInt8]) {
        var session = newSession(projectID: runtime.id, kind: kind, minutes: minutes, now: now)
        try Self.bind(&session.record, proof: proof, runtime: runtime, keyTier: keyTier)
        return session
    }

    /// The session length to use — the requested minutes (validated) capped by the project, or the
    /// project's — and whether the requested one was above the project's maximum
    /// (answered as `extension_capped`); nil `capped` when no duration was requested.
    func sessionLength(requested: Int64?, kind: SessionRecord.Kind, settings: ProjectSettings) throws -> (
        minutes: Int64, capped: Bool?
    ) {
        let maximum = kind == .anonymous ? settings.anonymousSessionMinutes : settings.identifiedSessionMinutes
        guard let requested else { return (maximum, nil) }
        guard ProjectSettings.sessionMinutesRange.contains(requested) else {
            throw CoreError(.invalidSessionDuration, "session_duration_minutes must be between 5 and 525600.")
        }
        return (min(requested, maximum), requested > maximum)
    }

    /// The session JWT for a session as of `now`: claims issued now, expiring after the JWT lifetime
    /// (or with the session, when that is sooner).
    ///
    /// With `shareSecond` (checks of existing sessions), a second request of the session within the
    /// same second gets the token already signed for exactly the same claims (see ``SessionJWTCache``);
    /// new sessions are always signed.
    func sessionJWT(for context: SessionContext, runtime: ProjectRuntime, now: Int64, shareSecond: Bool) -> String {
        let expiration = min(now + jwtLifetimeSeconds, max(context.session.expiresAt, now + 1))
        let claims = SessionClaims(
            issuer: issuer, audience: runtime.id, subject: context.profile.id, sessionID: context.session.id,
            expiration: Date(timeIntervalSince1970: Double(expiration)),
            issuedAt: Date(timeIntervalSince1970: Double(now)), notBefore: Date(timeIntervalSince1970: Double(now)),
            kind: context.session.kind.rawValue, externalID: context.profile.externalID,
            confirmation: context.session.jkt)
        guard shareSecond else { return runtime.keyRing.sign(claims) }
        let keyID = runtime.keyRing.signingKeyID
        if let token = jwtCache.token(for: claims, keyID: keyID) { return token }
        let token = runtime.keyRing.sign(claims)
        jwtCache.store(token, for: claims, keyID: keyID)
        return token
    }

    /// Forgets what this node keeps of an ended session (its shared JWT).
    func ended(sessionID: String) {
        jwtCache.remove(sessionID: sessionID)
    }

    /// Binds `session` to the request's device key, with the declared `key_tier` (kept only for a
    /// bound session); `invalid_request` for an unknown tier.
    private static func bind(
        _ session: inout SessionRecord, proof: DPoPProof?, runtime: ProjectRuntime, keyTier: String?
    ) throws {
        var tier: SessionRecord.KeyTier?
        if let keyTier {
            guard let value = SessionRecord.KeyTier(rawValue: keyTier) else {
                throw CoreError.invalidRequest("key_tier must be secure_enclave or software.")
            }
            tier = value
        }
        session.jkt = try bindingKey(proof: proof, runtime: runtime)
        session.keyTier = session.jkt == nil ? nil : tier
    }

    /// The device key a new session is bound to: the request's proof's, unless the project ignores
    /// proofs; `dpop_proof_required` when the project requires binding and none was sent.
    private static func bindingKey(proof: DPoPProof?, runtime: ProjectRuntime) throws -> String? {
        switch runtime.settings.sessionBinding {
        case .off: return nil
        case .optional: return proof?.thumbprint
        case .required:
            guard let proof else { throw CoreError.dpopProofRequired(onSession: false) }
            return proof.thumbprint
        }
    }
}
