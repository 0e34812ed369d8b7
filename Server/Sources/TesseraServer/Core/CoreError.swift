/// An error of the domain: a wire code, a message for people, and when a retry may succeed.
///
/// The store and the core throw only this; they know nothing of HTTP. The HTTP layer maps it to a
/// status and headers in one place (`APIError.init(_:)`), as Hummingbird maps its `PersistError`.
public struct CoreError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    /// The seconds after which the same request may succeed (a rate limit, an unavailable database).
    public var retryAfterSeconds: Int64?
    /// For a refused DPoP proof (RFC 9449): the challenge the answer carries.
    public var dpopChallenge: DPoPChallenge?
    /// A finer reason the answer carries as `error.reason` (`attestation_invalid`'s failed check).
    public var reason: String?

    public init(_ code: ErrorCode, _ message: String, retryAfterSeconds: Int64? = nil) {
        self.code = code
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }

    public var description: String { "\(code.rawValue): \(message)" }

    static func invalidRequest(_ message: String) -> CoreError {
        CoreError(.invalidRequest, message)
    }

    static let missingCredentials = CoreError(
        .invalidCredentials, "This endpoint needs an Authorization: Bearer credential.")
    static func wrongCredential(_ expected: String) -> CoreError {
        CoreError(.invalidCredentials, "This endpoint takes \(expected).")
    }
    static let invalidAPIKey = CoreError(.invalidAPIKey, "The API key is not valid.")
    static let notFound = CoreError(ErrorCode.notFound, "Not found.")
    static let sessionNotFound = CoreError(.sessionNotFound, "The session does not exist.")
    static let sessionExpired = CoreError(.sessionExpired, "The session has expired.")
    static let sessionRevoked = CoreError(.sessionRevoked, "The session has been revoked.")
    static let profileBlocked = CoreError(.profileBlocked, "This profile has been blocked by the app.")
    static let identityTokenReplayed = CoreError(.identityTokenReplayed, "This identity token has already been used.")
    static let slugTaken = CoreError(.slugTaken, "A project with this slug already exists.")
    static let operatorExists = CoreError(.operatorExists, "An operator with this email already exists.")

    /// The database cannot be reached or failed; both backends throw this, and the client may retry
    /// after a second.
    static let unavailable = CoreError(
        ErrorCode.serviceUnavailable, "The database is not available.", retryAfterSeconds: 1)

    /// A rate limit was reached; `seconds` until its window ends.
    static func rateLimited(retryAfter seconds: Int64) -> CoreError {
        CoreError(.rateLimited, "Too many requests; retry after \(seconds) seconds.", retryAfterSeconds: seconds)
    }

    static func payloadTooLarge(_ limit: Int) -> CoreError {
        CoreError(.payloadTooLarge, "Request bodies are limited to \(limit) bytes.")
    }
}

extension CoreError {
    static let installationConflict = CoreError(
        .installationConflict, "This installation ID is registered with another installation secret.")
    static let lastIdentitySecret = CoreError(
        .lastIdentitySecret, "This is the project's only identity secret; create another first.")
    static let attestationRequired = CoreError(
        .attestationRequired,
        "This project requires an App Attest attestation (first start) or assertion (restores and identifies).")
    static let challengeInvalid = CoreError(
        .challengeInvalid, "The App Attest challenge is unknown, already used or expired; ask for a new one.")
    /// `challenge_invalid` with `error.reason` `expired`: the challenge was issued but is too old, so
    /// the client asks for a new one and retries (the SDK does, once).
    static var challengeExpired: CoreError {
        var error = CoreError(.challengeInvalid, "The App Attest challenge expired; ask for a new one.")
        error.reason = "expired"
        return error
    }
    /// `attestation_invalid` with the failed check as `error.reason`.
    static func attestationInvalid(reason: String) -> CoreError {
        var error = CoreError(.attestationInvalid, "The App Attest evidence was refused (\(reason)).")
        error.reason = reason
        return error
    }
    static func identitySecretLimitReached(_ limit: Int) -> CoreError {
        CoreError(
            .identitySecretLimitReached, "A project has at most \(limit) active identity secrets; delete one first.")
    }
}
