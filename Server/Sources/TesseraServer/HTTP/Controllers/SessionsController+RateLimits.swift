import Hummingbird

/// The rate limits of anonymous starts and identifies (see ``RateLimiter``).
extension SessionsController {
    /// The anonymous start's hit on its client address's counter, or nil when the project sets no
    /// limit; throws `rate_limited` at once for an address this node knows to be blocked.
    func anonymousStartCharge(
        _ request: Request, runtime: ProjectRuntime, context: TesseraRequestContext, now: Int64
    ) throws -> RateLimitCharge? {
        guard let limit = runtime.settings.rateLimits.anonymousStartsPerMinute else { return nil }
        let key = RateLimitKey(
            projectID: runtime.id, bucket: .anonymousStart, key: addresses.key(request, context: context))
        try core.rateLimiter.checkBlocked([(key, limit)], now: now)
        return RateLimitCharge(key: key, window: RateLimitWindow(containing: now), limit: limit)
    }

    /// Counts an App Attest challenge on its client address's counter of its own, under the project's
    /// `anonymous_starts_per_minute` (each stored challenge is a row until it expires, so issuing them
    /// is limited like the starts they serve); `rate_limited` beyond it.
    func chargeChallenge(
        _ request: Request, runtime: ProjectRuntime, context: TesseraRequestContext, now: Int64
    ) async throws {
        guard let limit = runtime.settings.rateLimits.anonymousStartsPerMinute else { return }
        let key = RateLimitKey(
            projectID: runtime.id, bucket: .attestationChallenge, key: addresses.key(request, context: context))
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
    /// guessing a known installation's secret would be answered 409 forever, never 429.
    func startCounted(_ start: AnonymousStart, now: Int64) async throws -> AnonymousStartResult {
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

    /// The counters a failed identify adds to: the client address, and the installation of the
    /// calling anonymous session, if any.
    func failedIdentifyLimits(
        _ request: Request, runtime: ProjectRuntime, caller: Caller?, context: TesseraRequestContext
    ) -> [(key: RateLimitKey, limit: Int64?)] {
        let limits = runtime.settings.rateLimits
        var counters: [(key: RateLimitKey, limit: Int64?)] = []
        if limits.failedIdentifiesPerMinute != nil {
            counters.append(
                (
                    RateLimitKey(
                        projectID: runtime.id, bucket: .failedIdentifyByAddress,
                        key: addresses.key(request, context: context)),
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
    func identifyCounted(_ command: IdentifyCommand, limits: [(key: RateLimitKey, limit: Int64?)]) async throws
        -> IdentifyResult
    {
        do {
            return try await core.store.identify(command)
        } catch let error as CoreError where error.code == .identityTokenReplayed {
            throw await core.rateLimiter.failed(error, counting: limits, now: command.now)
        }
    }
}
