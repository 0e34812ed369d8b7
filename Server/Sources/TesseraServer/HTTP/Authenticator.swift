import Hummingbird

/// Resolves the credential an endpoint accepts into the request context before its handler runs,
/// as hummingbird-auth's authenticators set `context.identity`.
///
/// The `Authorization` header is parsed here, once. A credential of another kind is
/// `invalid_credentials`, an unknown API key `invalid_api_key`, a session that is not alive says why.
/// A session credential that finds no session — here or later in the handler — is counted for the
/// rate limiter (``RateLimiter/failedSessionLookup(_:from:)``), which may answer `rate_limited`
/// instead.
struct Authenticator: Sendable {
    /// The credential of the endpoint.
    let accepts: CredentialRequirement
    let credentials: CredentialResolver
    /// Counts the session credentials that find no session, by the client address `addresses` reads.
    let rateLimiter: RateLimiter
    let addresses: ClientAddressReader

    /// The route's responder: `handler` behind this authenticator.
    ///
    /// One closure that authenticates and then calls the handler, rather than a middleware with a
    /// `next`: every request of an authenticated endpoint runs through it, and one async frame fewer
    /// keeps a request's frames inside its task's first allocation slab (measured: one `malloc` and
    /// about 1 KB fewer per heartbeat).
    func responder(
        for handler: @escaping @Sendable (Request, TesseraRequestContext) async throws -> Response
    ) -> @Sendable (Request, TesseraRequestContext) async throws -> Response {
        guard accepts != .none else { return handler }
        return { request, context in
            let credential = Credential(headers: request.headers)
            do {
                var context = context
                context.authentication = try await authenticate(credential)
                return try await handler(request, context)
            } catch let failure as CoreError
                where failure.code == .sessionNotFound && credential?.isSession == true
            {
                throw await rateLimiter.failedSessionLookup(failure, from: addresses.key(request, context: context))
                    ?? failure
            }
        }
    }

    /// What `credential` stands for, if it is of the kind the endpoint accepts.
    func authenticate(_ credential: Credential?) async throws -> Authentication {
        guard let credential else { throw CoreError.missingCredentials }
        switch (accepts, credential) {
        case (.publishableKey, .publishableKey(let key)), (.publishableKeyOrSession, .publishableKey(let key)):
            return .project(try await credentials.project(publishableKey: key))
        case (.secretKey, .secretKey(let key)):
            return .project(try await credentials.project(secretKey: key))
        case (.session, .sessionToken(let token)), (.sessionOrExpiredJWT, .sessionToken(let token)),
            (.publishableKeyOrSession, .sessionToken(let token)):
            return .session(try await credentials.session(token: token))
        case (.session, .jws(let jwt)), (.publishableKeyOrSession, .jws(let jwt)):
            return .session(try await credentials.session(jwt: jwt, allowExpired: false))
        case (.sessionOrExpiredJWT, .jws(let jwt)):
            return .session(try await credentials.session(jwt: jwt, allowExpired: true))
        default:
            throw CoreError.wrongCredential(accepts.expected)
        }
    }
}
