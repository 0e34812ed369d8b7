import Foundation
import TesseraTokens

/// An identify's body, as read.
struct IdentifyInput: Sendable {
    var identityToken: String?
    var userID: String?
    var sessionDurationMinutes: Int64?
    var keyTier: String?
    /// The request's `User-Agent`, kept with the new session (``SessionClient``).
    var userAgent: String?
    /// The App Attest evidence, or why its members were refused: judged where identify judges it.
    var evidence: Result<AppAttestEvidence?, CoreError> = .success(nil)
}

extension SessionActions {
    /// `POST /v1/sessions/identify`: signs a device in as a user of the app, from a signed identity
    /// token (or, where the project allows it, an asserted user ID), creating, promoting or merging
    /// profiles as ``IdentifyPlan`` decides.
    ///
    /// A client blocked for failed identifies is refused before its body is read: `input` is the
    /// body as read, or why it could not be.
    /// - Parameters:
    ///   - caller: the calling session, when identify was called with one (an anonymous session
    ///     that becomes the user's).
    ///   - proof: the request's DPoP proof, which the new session is bound to.
    ///   - clientAddress: the client's rate-limit key, also recorded with the identify's events.
    ///   - now: the request's clock reading, used for every decision and write of the identify.
    func identify(
        runtime: ProjectRuntime, caller: Caller?, input: Result<IdentifyInput, any Error>, proof: DPoPProof?,
        clientAddress: String, now date: Date
    ) async throws -> SessionGrant {
        let now = Self.seconds(date)
        let limiter = core.rateLimiter
        let limits = failedIdentifyLimits(runtime: runtime, caller: caller, clientAddress: clientAddress)
        try limiter.checkBlocked(limits, now: now)
        let body = try input.get()
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
                let verified = try verifier.verifyReportingKey(token, now: date)
                claims = verified.claims
                if core.secretUsage.shouldRecord(projectID: runtime.id, kid: verified.keyID, now: now) {
                    recordSecretUse = verified.keyID
                }
            } catch {
                core.metrics.identifyRefused(code: error.code.rawValue, projectID: runtime.id)
                let failure = CoreError(ErrorCode(rawValue: error.code.rawValue), error.message)
                throw await limiter.failed(failure, counting: limits, now: now)
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
        let evidence = try body.evidence.get()
        let installationID = caller?.context.session.installationID
        let attest = try await core.appAttest.checkIdentify(
            evidence, settings: runtime.settings.appAttest, projectID: runtime.id, installationID: installationID,
            now: date)
        let kind: SessionRecord.Kind = verified ? .verified : .unverified
        let length = try core.sessions.sessionLength(
            requested: body.sessionDurationMinutes, kind: kind, settings: runtime.settings)
        var session = try core.sessions.newSession(
            runtime: runtime, kind: kind, minutes: length.minutes, now: now, proof: proof, keyTier: body.keyTier)
        recordClient(&session.record, clientAddress: clientAddress, userAgent: body.userAgent)
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
            sessionTokenHash: session.tokenHash, now: now,
            origin: Self.origin(caller: caller, clientAddress: clientAddress))
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
            now: now)
        core.metrics.sessionCreated(kind: kind.rawValue)
        core.activeUsers.saw(result.context, now: now)
        core.metrics.identified(
            outcome: result.merge?.outcome.rawValue ?? (result.createdProfile ? "created" : "signed_in"),
            projectID: runtime.id)
        return SessionGrant(
            context: result.context, token: session.token, now: now, extensionCapped: length.capped,
            merge: .some(result.merge))
    }

    // MARK: Rate limits

    /// The counters a failed identify adds to: the client address, and the installation of the
    /// calling anonymous session, if any.
    private func failedIdentifyLimits(runtime: ProjectRuntime, caller: Caller?, clientAddress: String) -> [(
        key: RateLimitKey, limit: Int64?
    )] {
        let limits = runtime.settings.rateLimits
        var counters: [(key: RateLimitKey, limit: Int64?)] = []
        if limits.failedIdentifiesPerMinute != nil {
            counters.append(
                (
                    RateLimitKey(projectID: runtime.id, bucket: .failedIdentifyByAddress, key: clientAddress),
                    limits.failedIdentifiesPerMinute
                ))
        }
        if let installationID = caller?.context.session.installationID,
            limits.failedIdentifiesPerInstallationPerMinute != nil
        {
            counters.append(
                (
                    RateLimitKey(projectID: runtime.id, bucket: .failedIdentifyByInstallation, key: installationID),
                    limits.failedIdentifiesPerInstallationPerMinute
                ))
        }
        return counters
    }

    /// Runs an identify; a replayed identity token counts as a failed identify.
    private func identifyCounted(_ command: IdentifyCommand, limits: [(key: RateLimitKey, limit: Int64?)]) async throws
        -> IdentifyResult
    {
        do {
            return try await core.store.identify(command)
        } catch let error as CoreError where error.code == .identityTokenReplayed {
            throw await core.rateLimiter.failed(error, counting: limits, now: command.now)
        }
    }
}
