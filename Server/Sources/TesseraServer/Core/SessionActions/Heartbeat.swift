import TesseraTokens

/// The heartbeat (`POST /v1/sessions/authenticate`): a live session checks itself, gets a fresh
/// session JWT and, with a requested duration, extends itself.
///
/// A function of plain inputs — the authenticated caller, the parsed body, the request's proof and
/// `now` — returning what the answer states; the HTTP layer only decodes the body and writes the
/// envelope. The heartbeat without a body is the server's hottest path: ``check(_:caller:now:)``
/// is synchronous (no task frame, no suspension) and writes nothing once the profile was seen today.
///
/// Only the session token extends: a session JWT travels to the app's backend and lives in logs and
/// caches of other systems, so it may only check and refresh itself (an expired one within its
/// session's life). Otherwise a leaked JWT, even long expired, could keep its session alive to the
/// project's maximum.
///
/// A heartbeat and an extension share method, URL and credential; only the body differs, which a
/// DPoP proof does not cover by itself. So an extension of a bound session needs a proof that names
/// its body (`tessera_body`, base64url SHA-256 of the body's bytes) and spends the proof's `jti`:
/// a captured heartbeat proof cannot extend, and the heartbeat stays free of writes (its proof may
/// repeat within its window, as a read's does).
enum HeartbeatAction {
    /// What a heartbeat answers: the session as it is now, and whether a requested extension was
    /// capped by the project's maximum (nil when none was requested).
    struct Outcome {
        var context: SessionContext
        var extensionCapped: Bool?
    }

    /// A heartbeat's body: `{"session_duration_minutes": …}`, every member optional.
    struct Body {
        /// The length the session asks to be extended to, in minutes.
        var sessionDurationMinutes: Int64?
        /// The body's bytes, as received: what a bound session's proof names (`tessera_body`).
        var bytes: [UInt8]
    }

    /// The heartbeat without a body: the caller's session as the authenticator read it, its profile
    /// marked active for the day (a set lookup once it was seen today).
    static func check(_ core: TesseraCore, caller: Caller, now: Int64) -> Outcome {
        core.activeUsers.saw(caller.context, now: now)
        return Outcome(context: caller.context, extensionCapped: nil)
    }

    /// The heartbeat with a body: extends the session when the body asks for a duration.
    ///
    /// Throws `session_token_required` when a session JWT asks to extend, `dpop_proof_invalid` when
    /// a bound session's proof does not name this body, `invalid_session_duration` for a duration
    /// out of range, and why the session is no longer alive when it ended meanwhile.
    static func extend(
        _ core: TesseraCore, caller: Caller, body: Body?, proof: DPoPProof?, now: Int64
    ) async throws -> Outcome {
        var session = caller.context
        var capped: Bool?
        if let requested = body?.sessionDurationMinutes, let bytes = body?.bytes {
            guard caller.sessionToken != nil else {
                throw CoreError(
                    .sessionTokenRequired,
                    "Extending a session needs its session token (st_…); a session JWT only checks and refreshes itself."
                )
            }
            if let proof {
                if session.session.jkt != nil, caller.runtime.settings.sessionBinding != .off {
                    guard let named = proof.bodyHash,
                        OpaqueToken.constantTimeEquals(Array(named.utf8), Array(DPoPProof.bodyHash(of: bytes).utf8))
                    else {
                        throw CoreError.dpopProofInvalid(
                            "An extension's DPoP proof must name its body: tessera_body, base64url SHA-256 of the body."
                        )
                    }
                }
                try await core.dpop.consume(proof)
            }
            let length = try core.sessions.sessionLength(
                requested: requested, kind: session.session.kind, settings: caller.runtime.settings)
            capped = length.capped
            guard
                let extended = try await core.store.extendSession(
                    sessionID: session.session.id, expiresAt: now + length.minutes * 60, now: now)
            else {
                _ = try await core.credentials.liveSession(id: session.session.id, now: now)
                throw CoreError.sessionNotFound
            }
            session = extended
        }
        core.activeUsers.saw(session, now: now)
        return Outcome(context: session, extensionCapped: capped)
    }
}
