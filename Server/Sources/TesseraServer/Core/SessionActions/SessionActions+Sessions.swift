import Foundation
import TesseraTokens

extension SessionActions {
    /// `POST /v1/sessions/authenticate` with a body: checks the caller's session and, when
    /// `requestedMinutes` is set, extends it (with the session token only, and, for a bound session,
    /// a proof that names the body and is spent).
    ///
    /// - Parameters:
    ///   - requestedMinutes: the body's `session_duration_minutes`; nil for a check alone.
    ///   - body: the body's bytes, which an extension's DPoP proof must name (`tessera_body`).
    ///   - proof: the request's DPoP proof, verified by authentication.
    func extend(caller: Caller, requestedMinutes: Int64?, body: [UInt8], proof: DPoPProof?, now date: Date)
        async throws -> SessionGrant
    {
        let now = Self.seconds(date)
        var session = caller.context
        var capped: Bool?
        if let requested = requestedMinutes {
            guard caller.sessionToken != nil else {
                throw CoreError(
                    .sessionTokenRequired,
                    "Extending a session needs its session token (st_…); a session JWT only checks and refreshes itself."
                )
            }
            if let proof {
                if session.session.jkt != nil, caller.runtime.settings.sessionBinding != .off {
                    guard let named = proof.bodyHash,
                        OpaqueToken.constantTimeEquals(Array(named.utf8), Array(DPoPProof.bodyHash(of: body).utf8))
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
            else { try await callerEnded(caller, now: now) }
            session = extended
        }
        core.activeUsers.saw(session, now: now)
        return SessionGrant(context: session, token: caller.sessionToken, now: now, extensionCapped: capped)
    }

    /// `POST /v1/sessions/revoke`: the caller signs out, ending its own session;
    /// `session_revoked` when it had ended already.
    func signOut(caller: Caller, clientAddress: String, now date: Date) async throws {
        guard
            try await core.store.revokeSession(
                sessionID: caller.context.session.id, profileID: nil, now: Self.seconds(date), reason: .signedOut,
                origin: Self.origin(caller: caller, clientAddress: clientAddress))
        else {
            throw CoreError.sessionRevoked
        }
        core.sessions.ended(sessionID: caller.context.session.id)
    }

    /// `POST /v1/sessions/revoke-others`: ends every other live session of the caller's profile and
    /// answers how many.
    ///
    /// An unverified session ends none: its user ID is asserted by a client holding only the
    /// publishable key, so it proves nothing about the profile's other sessions (as it sees none).
    func revokeOthers(caller: Caller, clientAddress: String, now date: Date) async throws -> Int {
        guard caller.context.session.kind != .unverified else { return 0 }
        let now = Self.seconds(date)
        guard
            let count = try await core.store.revokeOtherSessions(
                sessionID: caller.context.session.id, now: now,
                origin: Self.origin(caller: caller, clientAddress: clientAddress))
        else {
            // The caller's session ended meanwhile: say why, as any session endpoint would.
            try await callerEnded(caller, now: now)
        }
        return count
    }

    /// `GET /v1/sessions`: the live sessions of the caller's profile.
    ///
    /// An unverified session sees only itself: its user ID is asserted by a client holding only the
    /// publishable key, so it proves nothing about the profile's other sessions.
    func sessions(caller: Caller, now date: Date) async throws -> [SessionRecord] {
        if caller.context.session.kind == .unverified {
            return [caller.context.session]
        }
        let now = Self.seconds(date)
        var sessions = try await core.store.liveSessions(profileID: caller.context.profile.id, now: now)
        let own = caller.context.session.id
        if !sessions.contains(where: { $0.id.utf8.elementsEqual(own.utf8) }) {
            // The caller's session ended (a revoke, an erasure, its expiry) or changed profile between
            // the two reads. Answer as of the second read: why it ended if it is gone, else its profile's list.
            let current = try await core.credentials.liveSession(id: own, now: now)
            if !current.profile.id.utf8.elementsEqual(caller.context.profile.id.utf8) {
                sessions = try await core.store.liveSessions(profileID: current.profile.id, now: now)
            }
        }
        return sessions
    }

    /// `DELETE /v1/sessions/{session_id}`: ends a session of the caller's profile (its own: a
    /// sign-out); `not_found` for any other.
    ///
    /// An unverified session may end only itself; any other session is `not_found`, as if it did
    /// not exist.
    func deleteSession(_ sessionID: String, caller: Caller, clientAddress: String, now date: Date) async throws {
        if caller.context.session.kind == .unverified,
            !sessionID.utf8.elementsEqual(caller.context.session.id.utf8)
        {
            throw CoreError.notFound
        }
        let now = Self.seconds(date)
        // The caller's session is checked alive under its lock in the revoke's transaction, not
        // trusted from authentication: a session ended meanwhile ends nothing.
        guard
            let revoked = try await core.store.revokeSession(
                sessionID: sessionID, callerSessionID: caller.context.session.id, now: now,
                reason: sessionID.utf8.elementsEqual(caller.context.session.id.utf8) ? .signedOut : .revoked,
                origin: Self.origin(caller: caller, clientAddress: clientAddress))
        else {
            // Say why, as authentication would have.
            try await callerEnded(caller, now: now)
        }
        guard revoked else { throw CoreError.notFound }
    }
}
