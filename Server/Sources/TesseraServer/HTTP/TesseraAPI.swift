import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import TesseraTokens

/// The request handlers: credentials, bodies and the calls into the store.
///
/// Routes only translate HTTP into calls on this type; the store does the persistence.
struct TesseraAPI: Sendable {
    let store: any TesseraStore
    let projects: ProjectCache
    let configuration: ServerConfiguration
    let metrics: ServerMetrics
    let issuer: String
    /// Reads the client address that rate limits count.
    let addresses: ClientAddressReader
    /// Session JWTs signed in the current second, by session.
    let jwtCache = SessionJWTCache()
    /// When identify next records an identity secret's `last_used_at`.
    let secretUsage = IdentitySecretUsage()

    /// How long a retired signing key stays in the JWKS after its retirement: every JWT it signed,
    /// on any node (whose cached project may sign with it until it reloads), has expired by then.
    var retiredSigningKeyWindow: Int64 {
        configuration.sessionJWTLifetimeSeconds + configuration.sessionJWTLeewaySeconds
            + configuration.projectCacheSeconds
    }

    /// The current time as a `Date` and as whole Unix seconds.
    func currentTime() -> (date: Date, seconds: Int64) {
        let date = configuration.now()
        return (date, Int64(date.timeIntervalSince1970.rounded(.down)))
    }

    // MARK: Credentials

    /// The project of a request that must carry the publishable key.
    func requirePublishableKey(_ request: Request) async throws -> ProjectRuntime {
        switch Credential(headers: request.headers) {
        case .none: throw CoreError.missingCredentials
        case .publishableKey(let key):
            guard let runtime = try await projects.runtime(publishableKey: key) else { throw CoreError.invalidAPIKey }
            return runtime
        default: throw CoreError.wrongCredential("the publishable key (pk_…)")
        }
    }

    /// The project of a request that must carry the secret key.
    func requireSecretKey(_ request: Request) async throws -> ProjectRuntime {
        switch Credential(headers: request.headers) {
        case .none: throw CoreError.missingCredentials
        case .secretKey(let key):
            guard let runtime = try await projects.runtime(secretKey: key) else { throw CoreError.invalidAPIKey }
            return runtime
        default: throw CoreError.wrongCredential("the secret key (sk_…)")
        }
    }

    /// The live session of a request that carries a session token or session JWT.
    ///
    /// - Parameter allowExpiredJWT: accept a session JWT whose own `exp` has passed (authenticate only).
    func requireSession(_ request: Request, allowExpiredJWT: Bool = false) async throws -> Caller {
        guard let credential = Credential(headers: request.headers) else { throw CoreError.missingCredentials }
        return try await session(for: credential, allowExpiredJWT: allowExpiredJWT)
    }

    func session(for credential: Credential, allowExpiredJWT: Bool) async throws -> Caller {
        let now = currentTime()
        switch credential {
        case .sessionToken(let token):
            guard let context = try await store.sessionContext(tokenHash: OpaqueToken.sha256(token)) else {
                throw CoreError.sessionNotFound
            }
            try checkAlive(context.session, now: now.seconds)
            guard let runtime = try await projects.runtime(projectID: context.session.projectID) else {
                throw CoreError.sessionNotFound
            }
            return Caller(runtime: runtime, context: context, sessionToken: token)
        case .jws(let token):
            guard let unverified = try? SessionClaims.unverified(from: token),
                InputRules.isIdentifier(unverified.audience, prefix: "prj_"),
                var runtime = try await projects.runtime(projectID: unverified.audience)
            else {
                metrics.verificationFailed(code: "invalid_session_jwt")
                throw CoreError(.invalidCredentials, "The session JWT is not valid.")
            }
            var verified = verify(token, runtime: runtime, now: now.date, allowExpired: allowExpiredJWT)
            if case .failure(let error) = verified, error.code != .tokenExpired,
                runtime.loadedAt.duration(to: .now) > .seconds(1)
            {
                // Perhaps signed with a key this node has not loaded yet (another node rotated): read
                // the project again, at most once a second, and try once more.
                projects.invalidate(projectID: runtime.id)
                if let reloaded = try? await projects.runtime(projectID: runtime.id) {
                    runtime = reloaded
                    verified = verify(token, runtime: runtime, now: now.date, allowExpired: allowExpiredJWT)
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
            try checkAlive(context.session, now: now.seconds)
            return Caller(runtime: runtime, context: context, sessionToken: nil)
        case .publishableKey, .secretKey, .unknown:
            throw CoreError.wrongCredential("a session token (st_…) or session JWT")
        }
    }

    private func verify(_ token: String, runtime: ProjectRuntime, now: Date, allowExpired: Bool) -> Result<
        SessionClaims, TokenError
    > {
        do {
            return .success(
                try runtime.keyRing.verify(
                    token, now: now, leeway: Double(configuration.sessionJWTLeewaySeconds), allowExpired: allowExpired))
        } catch {
            return .failure(error)
        }
    }

    func checkAlive(_ session: SessionRecord, now: Int64) throws {
        if session.revokedAt != nil { throw CoreError.sessionRevoked }
        if session.expiresAt <= now { throw CoreError.sessionExpired }
    }

    /// The session as it is now, read again; or the 401 that says why it is no longer alive.
    func liveSession(id: String, now: Int64) async throws -> SessionContext {
        guard let current = try await store.sessionContext(sessionID: id) else { throw CoreError.sessionNotFound }
        try checkAlive(current.session, now: now)
        return current
    }

    // MARK: Bodies

    /// The request body, at most `maximumBodySize` bytes.
    func body(of request: Request) async throws -> ByteBuffer {
        var request = request
        do {
            return try await request.collectBody(upTo: configuration.maximumBodySize)
        } catch is NIOTooManyBytesError {
            throw CoreError.payloadTooLarge(configuration.maximumBodySize)
        }
    }

    /// Decodes a JSON object body; a request without one is refused.
    /// A body of only whitespace is not JSON and is refused like any other malformed body.
    func decode<T: RequestBody>(_ type: T.Type, from request: Request) async throws -> T {
        guard let value = try await decodeIfPresent(type, from: request) else {
            throw CoreError.invalidRequest("The request needs a JSON object body.")
        }
        return value
    }

    /// Decodes a JSON object body, or returns nil for an empty body (zero bytes) without decoding anything.
    func decodeIfPresent<T: RequestBody>(_ type: T.Type, from request: Request) async throws -> T? {
        // HTTP/1.1: no Transfer-Encoding and no (or a zero) Content-Length means no body. Waiting for
        // the end of a body stream that cannot have one still suspends the handler; skip it.
        if request.headers[.transferEncoding] == nil, request.headers[.contentLength].map({ $0 == "0" }) ?? true {
            return nil
        }
        var buffer = try await body(of: request)
        guard buffer.readableBytes > 0 else { return nil }
        let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
        return try RequestJSON.decode(type, from: bytes)
    }

    // MARK: Responses

    func json(_ status: HTTPResponse.Status = .ok, _ write: (inout JSONWriter) -> Void) -> Response {
        var writer = JSONWriter()
        write(&writer)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: writer.bytes)))
    }

    func noContent() -> Response {
        Response(status: .noContent)
    }

    // MARK: Sessions

    /// A new session for `profileID`, with its token; the store fills in profile and installation.
    func newSession(projectID: String, kind: SessionRecord.Kind, minutes: Int64, now: Int64) -> (
        record: SessionRecord, token: String, tokenHash: [UInt8]
    ) {
        let token = OpaqueToken.sessionToken()
        let record = SessionRecord(
            id: OpaqueToken.identifier(prefix: "ses_"), projectID: projectID, profileID: "", installationID: nil,
            kind: kind, createdAt: now, lastAuthenticatedAt: now, expiresAt: now + minutes * 60)
        return (record, token, OpaqueToken.sha256(token))
    }

    /// The session length to use — the requested minutes (validated) capped by the project, or the
    /// project's — and whether the requested one was above the project's maximum
    /// (answered as `extension_capped`); nil `capped` when no duration was requested.
    func sessionLength(requested: Int64?, kind: SessionRecord.Kind, settings: ProjectSettings) throws -> (
        minutes: Int64, capped: Bool?
    ) {
        let maximum = kind == .anonymous ? settings.anonymousSessionMinutes : settings.identifiedSessionMinutes
        guard let requested else { return (maximum, nil) }
        guard ProjectSettings.sessionMinutesRange.contains(requested) else {
            throw CoreError(.invalidSessionDuration, "session_duration_minutes must be between 5 and 525600.")
        }
        return (min(requested, maximum), requested > maximum)
    }

    /// The session JWT for a session as of `now`: claims issued now, expiring after the JWT lifetime
    /// (or with the session, when that is sooner).
    ///
    /// With `shareSecond` (checks of existing sessions), a second request of the session within the
    /// same second gets the token already signed for exactly the same claims (see ``SessionJWTCache``);
    /// new sessions are always signed.
    func sessionJWT(for context: SessionContext, runtime: ProjectRuntime, now: Int64, shareSecond: Bool) -> String {
        let expiration = min(now + configuration.sessionJWTLifetimeSeconds, max(context.session.expiresAt, now + 1))
        let claims = SessionClaims(
            issuer: issuer, audience: runtime.id, subject: context.profile.id, sessionID: context.session.id,
            expiration: Date(timeIntervalSince1970: Double(expiration)),
            issuedAt: Date(timeIntervalSince1970: Double(now)), notBefore: Date(timeIntervalSince1970: Double(now)),
            kind: context.session.kind.rawValue, externalID: context.profile.externalID)
        guard shareSecond else { return runtime.keyRing.sign(claims) }
        let keyID = runtime.keyRing.signingKeyID
        if let token = jwtCache.token(for: claims, keyID: keyID) { return token }
        let token = runtime.keyRing.sign(claims)
        jwtCache.store(token, for: claims, keyID: keyID)
        return token
    }

    /// The session envelope: session, token, JWT, profile, capabilities, server time (and merge).
    func envelope(
        _ status: HTTPResponse.Status, context: SessionContext, token: String?, runtime: ProjectRuntime, now: Int64,
        merge: (outcome: MergeOutcome, fromProfileID: String)?? = nil, shareSecond: Bool = false,
        extensionCapped: Bool? = nil
    ) -> Response {
        let jwt = sessionJWT(for: context, runtime: runtime, now: now, shareSecond: shareSecond)
        return json(status) { writer in
            writer.objectStart()
            writer.key("session")
            writer.session(context.session)
            writer.field("session_token", token)
            writer.field("session_jwt", jwt)
            writer.key("profile")
            writer.profile(context.profile)
            writer.key("capabilities")
            writer.capabilities(context.session)
            writer.time("server_time", now)
            if let extensionCapped {
                writer.field("extension_capped", extensionCapped)
            }
            if let merge {
                writer.key("merge")
                if let merge {
                    writer.objectStart()
                    writer.field("outcome", merge.outcome.rawValue)
                    writer.field("from_profile_id", merge.fromProfileID)
                    writer.objectEnd()
                } else {
                    writer.null()
                }
            }
            writer.objectEnd()
        }
    }
}

/// The authenticated session of a request.
struct Caller: Sendable {
    let runtime: ProjectRuntime
    let context: SessionContext
    /// The session token, when the request presented it (a JWT does not reveal it).
    let sessionToken: String?
}
