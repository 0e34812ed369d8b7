import Foundation
import Hummingbird
import TesseraTokens

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
    /// Proofs of possession (RFC 9449) of the endpoints that take a session or a publishable key.
    let dpop: DPoPGate
    /// Whether the endpoint spends a DPoP proof's `jti` (``Endpoint/spendsProof``).
    let spendsProof: Bool
    let now: @Sendable () -> Date

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
                if let caller = try sessionWithoutSuspending(credential) {
                    context.authentication = .session(caller)
                } else {
                    context.authentication = try await authenticate(credential)
                }
                guard accepts != .secretKey else { return try await handler(request, context) }
                let (proof, nonce) = try checkPossession(request, context: context, credential: credential)
                if spendsProof, let proof { try await dpop.consume(proof) }
                context.dpopProof = proof
                var response = try await handler(request, context)
                if let nonce { response.headers[.dpopNonce] = nonce }
                return response
            } catch let failure as CoreError
                where failure.code == .sessionNotFound && credential?.isSession == true
            {
                throw await rateLimiter.failedSessionLookup(failure, from: addresses.key(request, context: context))
                    ?? failure
            }
        }
    }

    /// The request's DPoP proof, verified, and a fresh nonce to answer with when its nonce is near its
    /// end; throws when a bound session presents no proof of its key, or a proof is bad. (The caller
    /// spends the proof where the endpoint says so.)
    ///
    /// A request of an unbound session without a `DPoP` header (every heartbeat before binding) costs
    /// two checks here. Synchronous: the proof's checks run on the thread's stack, not in frames the
    /// request's task allocates.
    private func checkPossession(_ request: Request, context: TesseraRequestContext, credential: Credential?)
        throws -> (DPoPProof?, String?)
    {
        // One pass over the fields: the first `DPoP` header and how many there are.
        var header: String?
        var headerCount = 0
        for field in request.headers where field.name == .dpop {
            headerCount += 1
            if header == nil { header = field.value }
        }
        if let header, header.utf8.count > DPoPGate.maximumProofLength {
            // Refused whatever the project's binding setting, as the contract's `maxLength` says: a
            // header no proof could fill is a bad proof, never silently ignored.
            throw CoreError.dpopProofInvalid("the DPoP header is longer than \(DPoPGate.maximumProofLength) bytes.")
        }
        if header == nil, context.caller?.context.session.jkt == nil { return (nil, nil) }
        let runtime = try context.project()
        let presented = DPoPGate.Presented(
            method: request.method.rawValue, path: request.uri.path, proof: header, credential: credential?.text,
            dpopScheme: Credential.usesDPoPScheme(request.headers))
        let date = now()
        if headerCount > 1 { throw CoreError.dpopProofInvalid("send exactly one DPoP header.") }
        let proof = try dpop.proof(presented, project: runtime, now: date)
        if let caller = context.caller {
            try dpop.authorize(caller.context.session, presented: presented, proof: proof, project: runtime)
        }
        return (proof, dpop.refreshedNonce(for: proof, project: runtime, now: date))
    }

    /// The caller of a session token on an endpoint that takes one, when it resolves without
    /// suspending (``CredentialResolver/sessionWithoutSuspending(token:)``: SQLite, a cached project);
    /// nil for any other credential or endpoint, or when the lookup must suspend.
    ///
    /// The heartbeat's path: no task frame for the lookup, the project or the authentication.
    private func sessionWithoutSuspending(_ credential: Credential?) throws -> Caller? {
        guard case .sessionToken(let token) = credential else { return nil }
        switch accepts {
        case .session, .sessionOrExpiredJWT, .publishableKeyOrSession:
            return try credentials.sessionWithoutSuspending(token: token)
        case .none, .publishableKey, .secretKey:
            return nil
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
