import Foundation
import TesseraTokens

/// An anonymous start's body, as read.
struct AnonymousStartInput: Sendable {
    var installationID: String
    var installationSecret: String
    var sessionDurationMinutes: Int64?
    var keyTier: String?
    /// The request's `User-Agent`, kept with the new session (``SessionClient``).
    var userAgent: String?
    /// The App Attest evidence, or why its members were refused: judged where the start judges it.
    var evidence: Result<AppAttestEvidence?, CoreError> = .success(nil)
}

extension SessionActions {
    /// The longest installation secret accepted.
    static let installationSecretLimit = 512  // characters of base64url

    /// `POST /v1/sessions/anonymous`: starts an anonymous session for an installation, creating the
    /// installation and its profile the first time (``SessionGrant/createdInstallation``) and
    /// restoring its profile after, for the holder of its secret.
    ///
    /// - Parameters:
    ///   - proof: the request's DPoP proof, which a new session is bound to.
    ///   - clientAddress: the client's rate-limit key, also recorded with the start's events.
    ///   - now: the request's clock reading, used for every decision and write of the start.
    func startAnonymous(
        runtime: ProjectRuntime, input: AnonymousStartInput, proof: DPoPProof?, clientAddress: String, now date: Date
    ) async throws -> SessionGrant {
        guard InputRules.isInstallationID(input.installationID) else {
            throw CoreError.invalidRequest("installation_id must be a lower-case UUID with dashes.")
        }
        guard let secretBytes = Base64URL.decode(input.installationSecret), secretBytes.count >= 32,
            input.installationSecret.utf8.count <= Self.installationSecretLimit
        else {
            throw CoreError.invalidRequest("installation_secret must be at least 32 random bytes in base64url.")
        }
        let evidence = try input.evidence.get()
        let length = try core.sessions.sessionLength(
            requested: input.sessionDurationMinutes, kind: .anonymous, settings: runtime.settings)
        let now = Self.seconds(date)
        var session = try core.sessions.newSession(
            runtime: runtime, kind: .anonymous, minutes: length.minutes, now: now, proof: proof, keyTier: input.keyTier)
        recordClient(&session.record, clientAddress: clientAddress, userAgent: input.userAgent)
        let charge = try anonymousStartCharge(runtime: runtime, clientAddress: clientAddress, now: now)
        var start = AnonymousStart(
            projectID: runtime.id, installationID: input.installationID,
            installationSecretHash: OpaqueToken.sha256(input.installationSecret),
            newProfileID: TimeOrderedID.make(prefix: "usr_"), newSession: session.record,
            sessionTokenHash: session.tokenHash, rateLimit: charge,
            origin: Self.origin(caller: nil, clientAddress: clientAddress))
        start.maxSessionsPerProfile = runtime.settings.maxSessionsPerProfile
        // Before the start: a refused one creates nothing. Its record waits for the start's success, so
        // only the holder of the installation secret changes what is kept of the installation.
        let attest: AppAttestGate.Check?
        do {
            attest = try await core.appAttest.checkStart(
                evidence, settings: runtime.settings.appAttest, projectID: runtime.id,
                installationID: input.installationID, now: date)
        } catch let error as CoreError where error.code != ErrorCode.serviceUnavailable {
            // A refused start counts against the address's limit as a start would: a script sending
            // no evidence is limited like one that starts.
            guard let charge else { throw error }
            throw await core.rateLimiter.failed(error, counting: [(charge.key, charge.limit)], now: now)
        }
        start.refusesNewInstallation = attest?.restoreOnly == true
        let result = try await startCounted(start, now: now)
        try await core.appAttest.record(
            attest, projectID: runtime.id, installationID: input.installationID,
            createdInstallation: result.createdInstallation, now: now)
        core.metrics.sessionCreated(kind: "anonymous")
        core.activeUsers.saw(result.context, now: now)
        return SessionGrant(
            context: result.context, token: session.token, now: now, extensionCapped: length.capped,
            createdInstallation: result.createdInstallation)
    }

    /// `POST /v1/attestations/challenge`: a single-use App Attest challenge, valid five minutes,
    /// counted on the client address's counter of its own.
    func attestationChallenge(runtime: ProjectRuntime, clientAddress: String, now date: Date) async throws -> (
        challenge: String, expiresAt: Int64
    ) {
        let now = Self.seconds(date)
        try await chargeChallenge(runtime: runtime, clientAddress: clientAddress, now: now)
        return try await core.appAttest.issueChallenge(projectID: runtime.id, now: now)
    }

    // MARK: Rate limits

    /// The anonymous start's hit on its client address's counter, or nil when the project sets no
    /// limit; throws `rate_limited` at once for an address this node knows to be blocked.
    private func anonymousStartCharge(runtime: ProjectRuntime, clientAddress: String, now: Int64) throws
        -> RateLimitCharge?
    {
        guard let limit = runtime.settings.rateLimits.anonymousStartsPerMinute else { return nil }
        let key = RateLimitKey(projectID: runtime.id, bucket: .anonymousStart, key: clientAddress)
        try core.rateLimiter.checkBlocked([(key, limit)], now: now)
        return RateLimitCharge(key: key, window: RateLimitWindow(containing: now), limit: limit)
    }

    /// Counts an App Attest challenge on its client address's counter of its own, under the project's
    /// `anonymous_starts_per_minute` (each stored challenge is a row until it expires, so issuing them
    /// is limited like the starts they serve); `rate_limited` beyond it.
    private func chargeChallenge(runtime: ProjectRuntime, clientAddress: String, now: Int64) async throws {
        guard let limit = runtime.settings.rateLimits.anonymousStartsPerMinute else { return }
        let key = RateLimitKey(projectID: runtime.id, bucket: .attestationChallenge, key: clientAddress)
        let limiter = core.rateLimiter
        try limiter.checkBlocked([(key, limit)], now: now)
        let window = RateLimitWindow(containing: now)
        guard let hits = try await core.store.hitRateLimits([key], window: window).first else { return }
        if hits >= limit { limiter.blocks.block(key, until: window.end, limit: limit, now: now) }
        if hits > limit { throw CoreError.rateLimited(retryAfter: window.retryAfter(now: now)) }
    }

    /// Starts an anonymous session that counts itself; a count at the limit blocks the address here.
    ///
    /// A refused start (`installation_conflict`: a wrong installation secret) rolls back with the
    /// hit it counted in its transaction, so it is counted again in a write of its own: otherwise
    /// guessing a known installation's secret would be answered `installation_conflict` forever, never `rate_limited`.
    private func startCounted(_ start: AnonymousStart, now: Int64) async throws -> AnonymousStartResult {
        let limiter = core.rateLimiter
        guard let charge = start.rateLimit else { return try await core.store.startAnonymousSession(start) }
        do {
            let result = try await core.store.startAnonymousSession(start)
            limiter.counted(charge, hits: result.rateLimitHits, now: now)
            return result
        } catch let error as CoreError where error.code == .rateLimited {
            limiter.blocks.block(charge.key, until: charge.window.end, limit: charge.limit, now: now)
            throw error
        } catch let error as CoreError {
            throw await limiter.failed(error, counting: [(charge.key, charge.limit)], now: now)
        }
    }
}
