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
    }

    func authenticate(duration: Duration?) async throws -> Session {
        _ = try await requireState()
        let minutes = duration.map { Int(($0.timeInterval / 60).rounded(.down)) }
        return try await authenticateShared(durationMinutes: minutes).session
    }

    func revokeCurrentSession() async throws {
        _ = try await requireState()
        guard let current = state?.session else { throw TesseraError(.noSession, message: "There is no session.") }
        generation &+= 1
        let gen = generation
        try await api.revokeIfAlive(sessionToken: current.token)
        try check(gen)
        clearLocally(current, reason: .signedOut)
    }

    func hydrate(_ tokens: SessionTokens) async throws -> Session {
        _ = try await requireState()
        generation &+= 1
        let gen = generation
        identityOperations += 1
        defer { identityOperations -= 1 }
        let envelope = try await api.authenticate(sessionToken: tokens.sessionToken, durationMinutes: nil)
        try check(gen)
        return apply(envelope).session
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

    /// Clears `ended` from the local state (its push token went with it on the server).
    func clearLocally(_ ended: StoredSession, reason: UnavailableReason) {
        guard state?.session?.token == ended.token else { return }
        state?.session = nil
        state?.lastEndReason = reason
        if state?.device?.sessionToken == ended.token { state?.device = nil }
        if ended.capabilities.kind != .anonymous { state?.installationConsumed = true }
        autoEstablish = false
        persist()
        publishCurrent()
    }
}
