import Foundation
import TesseraTokens

/// Resolves credentials to what they stand for: an API key to its project (through the project
/// cache), a session token or session JWT to its live session (through the store).
///
/// Every failure is a ``CoreError``: `invalid_api_key` for an unknown key, `invalid_credentials` for
/// a session JWT that does not verify, and `session_not_found`, `session_expired` or
/// `session_revoked` for a session that is not alive.
final class CredentialResolver: Sendable {
    let store: any TesseraStore
    let projects: ProjectCache
    let metrics: ServerMetrics
    /// The leeway on a session JWT's `exp` and `nbf`.
    let jwtLeewaySeconds: Int64
    let now: @Sendable () -> Date

    init(
        store: any TesseraStore, projects: ProjectCache, metrics: ServerMetrics, jwtLeewaySeconds: Int64,
        now: @escaping @Sendable () -> Date
    ) {
        self.store = store
        self.projects = projects
        self.metrics = metrics
        self.jwtLeewaySeconds = jwtLeewaySeconds
        self.now = now
    }

    /// The project of a publishable key.
    func project(publishableKey key: String) async throws -> ProjectRuntime {
        guard let runtime = try await projects.runtime(publishableKey: key) else { throw CoreError.invalidAPIKey }
        return runtime
    }

    /// The project of a secret key.
    func project(secretKey key: String) async throws -> ProjectRuntime {
        guard let runtime = try await projects.runtime(secretKey: key) else { throw CoreError.invalidAPIKey }
        return runtime
    }

    /// The live session of a session token.
    func session(token: String) async throws -> Caller {
        let now = Self.seconds(now())
        guard let context = try await store.sessionContext(tokenHash: OpaqueToken.sha256(token)) else {
            throw CoreError.sessionNotFound
        }
        try Self.checkAlive(context.session, now: now)
        guard let runtime = try await projects.runtime(projectID: context.session.projectID) else {
            throw CoreError.sessionNotFound
        }
        return Caller(runtime: runtime, context: context, sessionToken: token)
    }

    /// The live session of a session token, when it resolves without suspending: the store reads on
    /// this thread (SQLite) and the session's project is cached. Nil when it does not, and the caller
    /// awaits ``session(token:)``; a session that is not alive throws as there.
    func sessionWithoutSuspending(token: String) throws -> Caller? {
        let now = Self.seconds(now())
        guard let found = try store.sessionContextWithoutSuspending(tokenHash: OpaqueToken.sha256(token)) else {
            return nil
        }
        guard let context = found else { throw CoreError.sessionNotFound }
        try Self.checkAlive(context.session, now: now)
        guard let runtime = projects.cachedRuntime(projectID: context.session.projectID) else { return nil }
        return Caller(runtime: runtime, context: context, sessionToken: token)
    }

    /// The live session of a session JWT.
    ///
    /// - Parameter allowExpired: accept a JWT whose own `exp` has passed (authenticate only).
    func session(jwt token: String, allowExpired: Bool) async throws -> Caller {
        let date = now()
        guard let unverified = try? SessionClaims.unverified(from: token),
            InputRules.isIdentifier(unverified.audience, prefix: "prj_"),
            var runtime = try await projects.runtime(projectID: unverified.audience)
        else {
            metrics.verificationFailed(code: "invalid_session_jwt")
            throw CoreError(.invalidCredentials, "The session JWT is not valid.")
        }
        var verified = verify(token, runtime: runtime, now: date, allowExpired: allowExpired)
        if case .failure(let error) = verified, error.code != .tokenExpired,
            runtime.loadedAt.duration(to: .now) > .seconds(1)
        {
            // Perhaps signed with a key this node has not loaded yet (another node rotated): read
            // the project again, at most once a second, and try once more.
            projects.invalidate(projectID: runtime.id)
            if let reloaded = try? await projects.runtime(projectID: runtime.id) {
                runtime = reloaded
                verified = verify(token, runtime: runtime, now: date, allowExpired: allowExpired)
            }
        }
        let claims: SessionClaims
        switch verified {
        case .success(let value):
            claims = value
        case .failure(let error):
            metrics.verificationFailed(code: error.code.rawValue)
            let message =
                error.code == .tokenExpired
                ? "The session JWT has expired; use the session token or authenticate again."
                : "The session JWT is not valid."
            throw CoreError(.invalidCredentials, message)
        }
        guard let context = try await store.sessionContext(sessionID: claims.sessionID) else {
            throw CoreError.sessionNotFound
        }
        // Identifiers are compared as bytes (never by Swift's canonical equivalence).
        guard context.session.projectID.utf8.elementsEqual(runtime.id.utf8),
            context.session.profileID.utf8.elementsEqual(claims.subject.utf8)
        else {
            throw CoreError(.invalidCredentials, "The session JWT is not valid.")
        }
        try Self.checkAlive(context.session, now: Self.seconds(date))
        return Caller(runtime: runtime, context: context, sessionToken: nil)
    }

    private func verify(_ token: String, runtime: ProjectRuntime, now: Date, allowExpired: Bool) -> Result<
        SessionClaims, TokenError
    > {
        do {
            return .success(
                try runtime.keyRing.verify(
                    token, now: now, leeway: Double(jwtLeewaySeconds), allowExpired: allowExpired))
        } catch {
            return .failure(error)
        }
    }

    /// Throws why a session is no longer alive at `now`, if it is not.
    static func checkAlive(_ session: SessionRecord, now: Int64) throws {
        try checkAlive(revokedAt: session.revokedAt, expiresAt: session.expiresAt, now: now)
    }

    /// The aliveness rule on a session's two columns, as a transaction read them.
    @inline(__always)
    static func checkAlive(revokedAt: Int64?, expiresAt: Int64, now: Int64) throws {
        if revokedAt != nil { throw CoreError.sessionRevoked }
        if expiresAt <= now { throw CoreError.sessionExpired }
    }

    /// The session as it is now, read again; or the error that says why it is no longer alive.
    func liveSession(id: String, now: Int64) async throws -> SessionContext {
        guard let current = try await store.sessionContext(sessionID: id) else { throw CoreError.sessionNotFound }
        try Self.checkAlive(current.session, now: now)
        return current
    }

    /// Whole Unix seconds of a date.
    static func seconds(_ date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down))
    }
}
