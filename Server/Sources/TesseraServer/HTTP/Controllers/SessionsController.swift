import Foundation
import Hummingbird
import TesseraTokens

private struct AnonymousBody: RequestBody {
    static let readMembers: Set<String>? = Set(CodingKeys.allCases.map(\.rawValue))

    var installationID: String
    var installationSecret: String
    var sessionDurationMinutes: Int64?
    var keyTier: String?
    var attestation: AppAttestBody?
    var assertion: AppAttestBody?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case installationID = "installation_id"
        case installationSecret = "installation_secret"
        case sessionDurationMinutes = "session_duration_minutes"
        case keyTier = "key_tier"
        case attestation
        case assertion
    }
}

private struct IdentifyBody: RequestBody {
    /// The identity token is judged by its verifier, which refuses any byte outside base64url and dots
    /// as `401 invalid_identity_token`, as the contract says of malformed tokens.
    static let readMembers: Set<String>? = [
        "user_id", "session_duration_minutes", "key_tier", "attestation", "assertion",
    ]

    var identityToken: String?
    var userID: String?
    var sessionDurationMinutes: Int64?
    var keyTier: String?
    /// Only `{"unsupported": true}`: an installation attests (again) at an anonymous start.
    var attestation: AppAttestBody?
    var assertion: AppAttestBody?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case identityToken = "identity_token"
        case userID = "user_id"
        case sessionDurationMinutes = "session_duration_minutes"
        case keyTier = "key_tier"
        case attestation
        case assertion
    }
}

private struct DurationBody: RequestBody {
    static let readMembers: Set<String>? = Set(CodingKeys.allCases.map(\.rawValue))

    var sessionDurationMinutes: Int64?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case sessionDurationMinutes = "session_duration_minutes"
    }
}

/// `/v1/sessions`: start, identify, authenticate, revoke, list and end sessions.
struct SessionsController: Sendable {
    let core: TesseraCore
    let bodies: BodyReader
    let addresses: ClientAddressReader

    /// `POST /v1/sessions/anonymous`
    func startAnonymous(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let body = try await bodies.decode(AnonymousBody.self, from: request)
        guard InputRules.isInstallationID(body.installationID) else {
            throw CoreError.invalidRequest("installation_id must be a lower-case UUID with dashes.")
        }
        guard let secretBytes = Base64URL.decode(body.installationSecret), secretBytes.count >= 32,
            body.installationSecret.utf8.count <= 512
        else {
            throw CoreError.invalidRequest("installation_secret must be at least 32 random bytes in base64url.")
        }
        let evidence = try AppAttestBody.evidence(attestation: body.attestation, assertion: body.assertion)
        let length = try core.sessions.sessionLength(
            requested: body.sessionDurationMinutes, kind: .anonymous, settings: runtime.settings)
        let time = core.currentTime()
        let now = time.seconds
        var session = core.sessions.newSession(
            projectID: runtime.id, kind: .anonymous, minutes: length.minutes, now: now)
        try bind(&session.record, context, runtime: runtime, keyTier: body.keyTier)
        let charge = try anonymousStartCharge(request, runtime: runtime, context: context, now: now)
        var start = AnonymousStart(
            projectID: runtime.id, installationID: body.installationID,
            installationSecretHash: OpaqueToken.sha256(body.installationSecret),
            newProfileID: TimeOrderedID.make(prefix: "usr_"), newSession: session.record,
            sessionTokenHash: session.tokenHash, rateLimit: charge,
            origin: addresses.sdkOrigin(request, context: context))
        start.maxSessionsPerProfile = runtime.settings.maxSessionsPerProfile
        // Before the start: a refused one creates nothing. Its record waits for the start's success, so
        // only the holder of the installation secret changes what is kept of the installation.
        let attest: AppAttestGate.Check?
        do {
            attest = try await core.appAttest.checkStart(
                evidence, settings: runtime.settings.appAttest, projectID: runtime.id,
                installationID: body.installationID, now: time.date)
        } catch let error as CoreError where error.code != .serviceUnavailable {
            // A refused start counts against the address's limit as a start would: a script sending
            // no evidence is limited like one that starts.
            guard let charge else { throw error }
            throw await core.rateLimiter.failed(error, counting: [(charge.key, charge.limit)], now: now)
        }
        start.refusesNewInstallation = attest?.restoreOnly == true
        let result = try await startCounted(start, now: now)
        try await core.appAttest.record(
            attest, projectID: runtime.id, installationID: body.installationID,
            createdInstallation: result.createdInstallation, now: now)
        core.metrics.sessionCreated(kind: "anonymous")
        core.activeUsers.saw(result.context, now: now)
        return envelope(
            result.createdInstallation ? .created : .ok, context: result.context, token: session.token,
            runtime: runtime, now: now, extensionCapped: length.capped)
    }

    /// `POST /v1/sessions/identify`
    func identify(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let caller = context.caller
        let limiter = core.rateLimiter
        let limits = failedIdentifyLimits(request, runtime: runtime, caller: caller, context: context)
        try limiter.checkBlocked(limits, now: limiter.now)
        let body = try await bodies.decode(IdentifyBody.self, from: request)
        let now = core.currentTime()
        let externalID: String
        let verified: Bool
        var claims: IdentityClaims?
        var recordSecretUse: String?
        switch (body.identityToken, body.userID) {
        case (let token?, nil):
            guard let verifier = runtime.verifier else {
                core.metrics.identifyRefused(code: "invalid_signature", projectID: runtime.id)
                throw CoreError(.init(rawValue: "invalid_signature"), "The project has no identity secret.")
            }
            do {
                let verified = try verifier.verifyReportingKey(token, now: now.date)
                claims = verified.claims
                if core.secretUsage.shouldRecord(projectID: runtime.id, kid: verified.keyID, now: now.seconds) {
                    recordSecretUse = verified.keyID
                }
            } catch {
                core.metrics.identifyRefused(code: error.code.rawValue, projectID: runtime.id)
                let failure = CoreError(ErrorCode(rawValue: error.code.rawValue), error.message)
                throw await limiter.failed(failure, counting: limits, now: now.seconds)
            }
            externalID = claims!.subject
            verified = true
        case (nil, let userID?):
            guard runtime.settings.allowUnverifiedIdentify else {
                throw CoreError(
                    .unverifiedIdentifyDisabled, "This project accepts only signed identity tokens (identity_token).")
            }
            guard InputRules.isExternalID(userID) else {
                throw CoreError.invalidRequest("user_id must be 1 to 255 Unicode scalars without control characters.")
            }
            externalID = userID
            verified = false
        default:
            throw CoreError.invalidRequest("Send exactly one of identity_token and user_id.")
        }
        if let attestation = body.attestation, attestation.unsupported != true {
            throw CoreError.invalidRequest(
                "identify takes attestation only as {\"unsupported\": true}; an installation attests at an anonymous start."
            )
        }
        let evidence = try AppAttestBody.evidence(attestation: body.attestation, assertion: body.assertion)
        let installationID = caller?.context.session.installationID
        let attest = try await core.appAttest.checkIdentify(
            evidence, settings: runtime.settings.appAttest, projectID: runtime.id, installationID: installationID,
            now: now.date)
        let kind: SessionRecord.Kind = verified ? .verified : .unverified
        let length = try core.sessions.sessionLength(
            requested: body.sessionDurationMinutes, kind: kind, settings: runtime.settings)
        var session = core.sessions.newSession(
            projectID: runtime.id, kind: kind, minutes: length.minutes, now: now.seconds)
        try bind(&session.record, context, runtime: runtime, keyTier: body.keyTier)
        let tokenID = claims?.tokenID.map { jti in
            (
                value: jti,
                expiresAt: Int64(claims!.expiration.timeIntervalSince1970.rounded(.up)) + runtime.settings.leewaySeconds
            )
        }
        var command = IdentifyCommand(
            projectID: runtime.id, callerSessionID: caller?.context.session.id, externalID: externalID,
            verified: verified, name: claims?.name, avatarURL: claims?.avatarURL, email: claims?.email,
            tokenID: tokenID, newProfileID: TimeOrderedID.make(prefix: "usr_"), newSession: session.record,
            sessionTokenHash: session.tokenHash, now: now.seconds,
            origin: addresses.sdkOrigin(request, context: context))
        command.recordSecretUse = recordSecretUse
        command.maxSessionsPerProfile = runtime.settings.maxSessionsPerProfile
        let result: IdentifyResult
        do {
            result = try await identifyCounted(command, limits: limits)
        } catch {
            // The record rolled back with the identify: let the next identify with this secret write it.
            if let kid = recordSecretUse { core.secretUsage.recordFailed(projectID: runtime.id, kid: kid) }
            throw error
        }
        try await core.appAttest.record(
            attest, projectID: runtime.id, installationID: installationID, createdInstallation: false,
            now: now.seconds)
        core.metrics.sessionCreated(kind: kind.rawValue)
        core.activeUsers.saw(result.context, now: now.seconds)
        core.metrics.identified(
            outcome: result.merge?.outcome.rawValue ?? (result.createdProfile ? "created" : "signed_in"),
            projectID: runtime.id)
        return envelope(
            .ok, context: result.context, token: session.token, runtime: runtime, now: now.seconds,
            merge: .some(result.merge), extensionCapped: length.capped)
    }

    /// `POST /v1/attestations/challenge`: a single-use App Attest challenge, valid five minutes.
    func attestationChallenge(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let now = core.currentTime().seconds
        try await chargeChallenge(request, runtime: runtime, context: context, now: now)
        let issued = try await core.appAttest.issueChallenge(projectID: runtime.id, now: now)
        return .json { writer in
            writer.objectStart()
            writer.field("challenge", issued.challenge)
            writer.time("expires_at", issued.expiresAt)
            writer.objectEnd()
        }
    }

    /// `POST /v1/sessions/authenticate`: the heartbeat (``HeartbeatAction``).
    func authenticate(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let caller = try context.session()
        // The heartbeat has no body: nothing to decode, nothing to await. Answered here, in a frame with
        // nothing held across a suspension, it leaves its task's frames inside the first allocation slab.
        guard BodyReader.mayHaveBody(request) else {
            let now = core.currentTime().seconds
            let outcome = HeartbeatAction.check(core, caller: caller, now: now)
            return envelope(
                .ok, context: outcome.context, token: caller.sessionToken, runtime: caller.runtime, now: now,
                shareSecond: true, extensionCapped: nil)
        }
        return try await extend(request, caller: caller, proof: context.dpopProof)
    }

    /// Binds a new session to the request's device key, with the key tier the client declares
    /// (`key_tier`, kept only for a bound session); `400 invalid_request` for an unknown tier.
    private func bind(
        _ session: inout SessionRecord, _ context: TesseraRequestContext, runtime: ProjectRuntime, keyTier: String?
    ) throws {
        var tier: SessionRecord.KeyTier?
        if let keyTier {
            guard let value = SessionRecord.KeyTier(rawValue: keyTier) else {
                throw CoreError.invalidRequest("key_tier must be secure_enclave or software.")
            }
            tier = value
        }
        session.jkt = try bindingKey(context, runtime: runtime)
        session.keyTier = session.jkt == nil ? nil : tier
    }

    /// The device key a new session is bound to: the request's proof's, unless the project ignores
    /// proofs; `dpop_proof_required` (400) when the project requires binding and none was sent.
    private func bindingKey(_ context: TesseraRequestContext, runtime: ProjectRuntime) throws -> String? {
        switch runtime.settings.sessionBinding {
        case .off: return nil
        case .optional: return context.dpopProof?.thumbprint
        case .required:
            guard let proof = context.dpopProof else { throw CoreError.dpopProofRequired(onSession: false) }
            return proof.thumbprint
        }
    }

    /// `POST /v1/sessions/authenticate` with a body: a heartbeat that may extend the session.
    private func extend(_ request: Request, caller: Caller, proof: DPoPProof?) async throws -> Response {
        var buffer = try await bodies.body(of: request)
        let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
        let body =
            bytes.isEmpty
            ? nil
            : HeartbeatAction.Body(
                sessionDurationMinutes: try RequestJSON.decode(DurationBody.self, from: bytes).sessionDurationMinutes,
                bytes: bytes)
        let now = core.currentTime().seconds
        let outcome = try await HeartbeatAction.extend(core, caller: caller, body: body, proof: proof, now: now)
        return envelope(
            .ok, context: outcome.context, token: caller.sessionToken, runtime: caller.runtime, now: now,
            shareSecond: true, extensionCapped: outcome.extensionCapped)
    }

    /// `POST /v1/sessions/revoke`
    func revoke(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let caller = try context.session()
        let now = core.currentTime().seconds
        guard
            try await core.store.revokeSession(
                sessionID: caller.context.session.id, profileID: nil, now: now, reason: .signedOut,
                origin: addresses.sdkOrigin(request, context: context))
        else {
            throw CoreError.sessionRevoked
        }
        core.sessions.ended(sessionID: caller.context.session.id)
        return .noContent
    }

    /// `POST /v1/sessions/revoke-others`: ends every other live session of the caller's profile and
    /// answers how many (`{ended}`).
    ///
    /// An unverified session ends none: its user ID is asserted by a client holding only the
    /// publishable key, so it proves nothing about the profile's other sessions (as it sees none).
    func revokeOthers(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let caller = try context.session()
        let now = core.currentTime().seconds
        var ended = 0
        if caller.context.session.kind != .unverified {
            guard
                let count = try await core.store.revokeOtherSessions(
                    sessionID: caller.context.session.id, now: now,
                    origin: addresses.sdkOrigin(request, context: context))
            else {
                // The caller's session ended meanwhile: say why, as any session endpoint would.
                _ = try await core.credentials.liveSession(id: caller.context.session.id, now: now)
                throw CoreError.sessionNotFound
            }
            ended = count
        }
        return .json { writer in
            writer.objectStart()
            writer.field("ended", Int64(ended))
            writer.objectEnd()
        }
    }

    /// `GET /v1/sessions`
    ///
    /// An unverified session sees only itself: its user ID is asserted by a client holding only the
    /// publishable key, so it proves nothing about the profile's other sessions.
    func listSessions(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let caller = try context.session()
        let now = core.currentTime().seconds
        if caller.context.session.kind == .unverified {
            return .json { $0.sessions([caller.context.session]) }
        }
        var sessions = try await core.store.liveSessions(profileID: caller.context.profile.id, now: now)
        let own = caller.context.session.id
        if !sessions.contains(where: { $0.id.utf8.elementsEqual(own.utf8) }) {
            // The caller's session ended (a revoke, an erasure, its expiry) or changed profile between
            // the two reads. Answer as of the second read: 401 if it is gone, else its profile's list.
            let current = try await core.credentials.liveSession(id: own, now: now)
            if !current.profile.id.utf8.elementsEqual(caller.context.profile.id.utf8) {
                sessions = try await core.store.liveSessions(profileID: current.profile.id, now: now)
            }
        }
        return .json { $0.sessions(sessions) }
    }

    /// `DELETE /v1/sessions/{session_id}`
    ///
    /// An unverified session may end only itself; any other session is `404`, as if it did not exist.
    func deleteSession(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let sessionID = try context.parameters.require("session_id")
        let caller = try context.session()
        if caller.context.session.kind == .unverified,
            !sessionID.utf8.elementsEqual(caller.context.session.id.utf8)
        {
            throw CoreError.notFound
        }
        let now = core.currentTime().seconds
        // The caller's session is checked alive under its lock in the revoke's transaction, not
        // trusted from authentication: a session ended meanwhile ends nothing.
        guard
            let revoked = try await core.store.revokeSession(
                sessionID: sessionID, callerSessionID: caller.context.session.id, now: now,
                reason: sessionID.utf8.elementsEqual(caller.context.session.id.utf8) ? .signedOut : .revoked,
                origin: addresses.sdkOrigin(request, context: context))
        else {
            // Say why, as authentication would have.
            _ = try await core.credentials.liveSession(id: caller.context.session.id, now: now)
            throw CoreError.sessionNotFound
        }
        guard revoked else { throw CoreError.notFound }
        return .noContent
    }
}
