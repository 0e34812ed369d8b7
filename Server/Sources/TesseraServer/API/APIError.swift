public import HTTPTypes
import Hummingbird
import TesseraTokens

/// An error answered on the wire as `{"error": {"code", "message"}}` with its HTTP status.
public struct APIError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A wire error code; open, so codes can be added without breaking clients.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let invalidRequest = Code(rawValue: "invalid_request")
        public static let payloadTooLarge = Code(rawValue: "payload_too_large")
        public static let invalidAPIKey = Code(rawValue: "invalid_api_key")
        public static let invalidCredentials = Code(rawValue: "invalid_credentials")
        public static let identityTokenReplayed = Code(rawValue: "identity_token_replayed")
        public static let externalUserIDChanged = Code(rawValue: "external_user_id_changed")
        public static let unverifiedIdentifyDisabled = Code(rawValue: "unverified_identify_disabled")
        public static let installationConflict = Code(rawValue: "installation_conflict")
        public static let invalidSessionDuration = Code(rawValue: "invalid_session_duration")
        public static let sessionTokenRequired = Code(rawValue: "session_token_required")
        public static let sessionNotFound = Code(rawValue: "session_not_found")
        public static let sessionExpired = Code(rawValue: "session_expired")
        public static let sessionRevoked = Code(rawValue: "session_revoked")
        public static let notFound = Code(rawValue: "not_found")
        public static let methodNotAllowed = Code(rawValue: "method_not_allowed")
        public static let rateLimited = Code(rawValue: "rate_limited")
        public static let identitySecretLimitReached = Code(rawValue: "identity_secret_limit_reached")
        public static let lastIdentitySecret = Code(rawValue: "last_identity_secret")
        public static let slugTaken = Code(rawValue: "slug_taken")
        public static let internalError = Code(rawValue: "internal_error")
        public static let serviceUnavailable = Code(rawValue: "service_unavailable")
        public static let profileBlocked = Code(rawValue: "profile_blocked")

        /// Every code above, then ``identityToken``: all the codes the server can answer (`slug_taken`
        /// only to the operator CLI, which creates projects). `OpenAPIContractTests` holds the list
        /// against the sources and `Server/openapi.json`.
        static let all: [Code] =
            [
                invalidRequest, payloadTooLarge, invalidAPIKey, invalidCredentials, identityTokenReplayed,
                externalUserIDChanged, unverifiedIdentifyDisabled, installationConflict, invalidSessionDuration,
                sessionTokenRequired, sessionNotFound, sessionExpired, sessionRevoked, notFound, methodNotAllowed,
                identitySecretLimitReached, lastIdentitySecret, rateLimited, slugTaken, internalError,
                serviceUnavailable, profileBlocked,
            ] + identityToken

        /// The identity-token failures, which identify answers with `TokenError`'s code unchanged.
        static let identityToken: [Code] = [
            TokenError.Code.invalidIdentityToken, .invalidSignature, .unsupportedAlgorithm, .identityTokenExpired,
            .identityTokenNotYetValid, .identityTokenLifetimeTooLong, .audienceMismatch, .invalidClaims,
            .invalidEmail, .invalidName, .invalidAvatarURL,
        ].map { Code(rawValue: $0.rawValue) }
    }

    public var status: HTTPResponse.Status
    public var code: Code
    public var message: String
    /// Extra response headers (`Allow`, `Retry-After`).
    public var headers: HTTPFields

    public init(_ status: HTTPResponse.Status, _ code: Code, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    public var description: String { "\(status.code) \(code.rawValue): \(message)" }

    static func invalidRequest(_ message: String) -> APIError {
        APIError(.badRequest, .invalidRequest, message)
    }

    static let missingCredentials = APIError(
        .unauthorized, .invalidCredentials, "This endpoint needs an Authorization: Bearer credential.")
    static func wrongCredential(_ expected: String) -> APIError {
        APIError(.unauthorized, .invalidCredentials, "This endpoint takes \(expected).")
    }
    static let invalidAPIKey = APIError(.unauthorized, .invalidAPIKey, "The API key is not valid.")
    static let notFound = APIError(.notFound, .notFound, "Not found.")
    static let sessionNotFound = APIError(.unauthorized, .sessionNotFound, "The session does not exist.")
    static let sessionExpired = APIError(.unauthorized, .sessionExpired, "The session has expired.")
    static let sessionRevoked = APIError(.unauthorized, .sessionRevoked, "The session has been revoked.")
    static let profileBlocked = APIError(.forbidden, .profileBlocked, "This profile has been blocked by the app.")
}
