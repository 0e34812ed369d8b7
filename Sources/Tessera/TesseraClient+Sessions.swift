import Foundation

extension TesseraClient {
    /// The sessions namespace of a ``TesseraClient``: `tessera.sessions.authenticate(duration:)`, …
    public struct Sessions: Sendable {
        let client: TesseraClient

        /// Checks the current session with the server, or extends it.
        /// - Parameter duration: nil only checks (and fetches a fresh session JWT); a duration (5 minutes
        ///   … 1 year) extends the session to at least now + duration.
        /// - Returns: The session as the server sees it.
        @discardableResult
        public func authenticate(duration: Duration? = nil) async throws -> Session {
            try await client.authenticate(duration: duration)
        }

        /// Revokes the current session on the server (its push tokens go with it) and clears it locally.
        /// No new session is started: call ``TesseraClient/refreshSession()`` or identify next, or use
        /// ``TesseraClient/signOut()`` for the whole ordered pipeline.
        public func revoke() async throws {
            try await client.revokeCurrentSession()
        }

        /// Hydrates the client from session credentials the app's backend obtained. The token is checked
        /// with the server first; on failure nothing changes.
        /// - Parameter tokens: The session token (and optionally its JWT).
        /// - Returns: The session.
        @discardableResult
        public func update(tokens: SessionTokens) async throws -> Session {
            try await client.hydrate(tokens)
        }

        /// The current session, if any.
        public var current: Session? { get async { await client.state?.session?.session } }
        /// The opaque session token of the current session, if any.
        public var token: String? { get async { await client.state?.session?.token } }
        /// The current session JWT as stored (it may be close to expiry: use
        /// ``TesseraClient/authorizationHeader()`` for a fresh one).
        public var jwt: String? { get async { await client.state?.session?.jwt } }

        /// The live sessions of the current profile (this one included).
        public func list() async throws -> [Session] {
            try await client.listSessions()
        }

        /// Revokes one of the profile's sessions; revoking the current one clears it locally too.
        /// - Parameter sessionID: The session ID.
        public func revoke(sessionID: String) async throws {
            try await client.revokeSession(id: sessionID)
        }

        /// Ends every other session of the current profile ("sign out everywhere else"); the current
        /// session stays. Same as ``TesseraClient/revokeOtherSessions()``.
        /// - Returns: How many sessions the server ended.
        @discardableResult
        public func revokeOthers() async throws -> Int {
            try await client.revokeOtherSessions()
        }
    }

    /// Ends every other session of the current profile, on every device ("sign out everywhere else"),
    /// with the push tokens registered through them; this session and its push token stay.
    ///
    /// A session from the client-asserted ``identify(userID:)`` manages only itself: the server ends
    /// nothing for it and the answer is 0.
    /// - Returns: How many sessions the server ended.
    /// - Throws: ``TesseraError`` `no_session` without a session, or the server's error (a session that
    ///   ended meanwhile ends locally as for any call).
    @discardableResult
    public func revokeOtherSessions() async throws -> Int {
        _ = try await requireState()
        guard let current = state?.session else { throw TesseraError(.noSession, message: "There is no session.") }
        do {
            return try await api.revokeOtherSessions(sessionToken: current.token)
        } catch let error where error.endsSession {
            endSession(error.code == .sessionExpired ? .expired : .revoked, token: current.token)
            throw error
        }
    }

    func authenticate(duration: Duration?) async throws -> Session {
        _ = try await requireState()
        let minutes = duration.map { Int(($0.timeInterval / 60).rounded(.down)) }
        return try await authenticateShared(durationMinutes: minutes).session
    }

    func revokeCurrentSession() async throws {
        _ = try await requireState()
        guard let current = state?.session else { throw TesseraError(.noSession, message: "There is no session.") }
        let gen = ledger.advance()
        try await api.revokeIfAlive(sessionToken: current.token)
        try check(gen)
        clearLocally(current, reason: .signedOut)
    }

    func hydrate(_ tokens: SessionTokens) async throws -> Session {
        let (session, leaving, device) = try await adoptHydrated(tokens)
        // The replaced session ends in the sign-out order: its push token is unregistered, then it is revoked
        // (queued for the heartbeat when that fails); then the push token moves to the hydrated session.
        for item in leaving { await flush(item) }
        let flushed = leaving.allSatisfy { state?.pendingRevocations.contains($0) != true }
        if let device, flushed, state?.session?.token == session.token {
            do {
                _ = try await registerDeviceToken(
                    device.pushToken, platform: device.device.platform, environment: device.device.environment)
            } catch {
                log(
                    .warning,
                    "could not move the push token to the hydrated session: \(TesseraError.wrapping(error).code)")
            }
        }
        return session.session
    }

    /// Checks the hydrated token and makes it current; answers it, the revocations of what it replaced
    /// (queued already), and the push token to move to it.
    private func adoptHydrated(
        _ tokens: SessionTokens
    ) async throws -> (StoredSession, [PendingRevocation], StoredDevice?) {
        _ = try await requireState()
        let gen = ledger.advance()
        ledger.identityOperations += 1
        defer { ledger.identityOperations -= 1 }
        let envelope = try await api.authenticate(sessionToken: tokens.sessionToken, durationMinutes: nil)
        if !ledger.isCurrent(gen) {
            // Overtaken: the app handed this session over, nobody else will use it.
            if state?.session?.token != envelope.sessionToken, state?.device?.sessionToken != envelope.sessionToken {
                await abandon(sessionToken: envelope.sessionToken)
            }
            try check(gen)
        }
        // The session and push token it replaces end here (the push token moves to it below).
        let items = ledger.revocations(endingAllBut: envelope.sessionToken)
        let device = state?.device.flatMap { $0.sessionToken == envelope.sessionToken ? nil : $0 }
        ledger.endSession(
            .signedOut, keeping: envelope.sessionToken, pushTokens: .any, queueing: ledger.unqueued(items))
        let stored = apply(envelope)
        return (stored, items, device)
    }

    func listSessions() async throws -> [Session] {
        _ = try await requireState()
        guard let current = state?.session else { throw TesseraError(.noSession, message: "There is no session.") }
        return try await api.listSessions(sessionToken: current.token)
    }

    func revokeSession(id: String) async throws {
        _ = try await requireState()
        guard let current = state?.session else { throw TesseraError(.noSession, message: "There is no session.") }
        if id == current.session.id { return try await revokeCurrentSession() }
        try await api.revokeSession(id: id, sessionToken: current.token)
    }

    /// Clears `ended` from the local state, when it is still the current session (its push token went
    /// with it on the server). No new session is started.
    func clearLocally(_ ended: StoredSession, reason: UnavailableReason) {
        guard state?.session?.token == ended.token else { return }
        heartbeat.autoEstablish = false
        endLocalSession(reason, pushTokens: .boundToEndedSession)
    }
}
