import TesseraTokens

/// A wire error code: what went wrong, as the `error.code` member of an answer says it.
///
/// Open, so codes can be added without breaking clients. The identity-token codes of
/// `TesseraTokens` (`TokenError.Code`) travel as error codes too.
public struct ErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let invalidRequest = ErrorCode(rawValue: "invalid_request")
    public static let payloadTooLarge = ErrorCode(rawValue: "payload_too_large")
    public static let invalidAPIKey = ErrorCode(rawValue: "invalid_api_key")
    public static let invalidCredentials = ErrorCode(rawValue: "invalid_credentials")
    public static let identityTokenReplayed = ErrorCode(rawValue: "identity_token_replayed")
    public static let externalUserIDChanged = ErrorCode(rawValue: "external_user_id_changed")
    public static let unverifiedIdentifyDisabled = ErrorCode(rawValue: "unverified_identify_disabled")
    public static let installationConflict = ErrorCode(rawValue: "installation_conflict")
    public static let invalidSessionDuration = ErrorCode(rawValue: "invalid_session_duration")
    public static let sessionTokenRequired = ErrorCode(rawValue: "session_token_required")
    public static let sessionNotFound = ErrorCode(rawValue: "session_not_found")
    public static let sessionExpired = ErrorCode(rawValue: "session_expired")
    public static let sessionRevoked = ErrorCode(rawValue: "session_revoked")
    public static let notFound = ErrorCode(rawValue: "not_found")
    public static let methodNotAllowed = ErrorCode(rawValue: "method_not_allowed")
    public static let rateLimited = ErrorCode(rawValue: "rate_limited")
    public static let identitySecretLimitReached = ErrorCode(rawValue: "identity_secret_limit_reached")
    public static let lastIdentitySecret = ErrorCode(rawValue: "last_identity_secret")
    public static let slugTaken = ErrorCode(rawValue: "slug_taken")
    public static let internalError = ErrorCode(rawValue: "internal_error")
    public static let serviceUnavailable = ErrorCode(rawValue: "service_unavailable")
    public static let profileBlocked = ErrorCode(rawValue: "profile_blocked")
    public static let webhookURLNotAllowed = ErrorCode(rawValue: "webhook_url_not_allowed")
    /// An operator with this email exists (console and `tessera operators create` only).
    public static let operatorExists = ErrorCode(rawValue: "operator_exists")
    /// A session bound to a device key presented without a DPoP proof (or with `Bearer`), or an
    /// anonymous start or identify without one where the project requires binding.
    public static let dpopProofRequired = ErrorCode(rawValue: "dpop_proof_required")
    /// A DPoP proof that does not verify or does not fit the request.
    public static let dpopProofInvalid = ErrorCode(rawValue: "dpop_proof_invalid")
    /// A DPoP proof by another key than the one the session is bound to.
    public static let dpopKeyMismatch = ErrorCode(rawValue: "dpop_key_mismatch")
    /// A DPoP proof used a second time for a call that changes something.
    public static let dpopProofReplayed = ErrorCode(rawValue: "dpop_proof_replayed")
    /// The project requires a server nonce in DPoP proofs: retry with the `DPoP-Nonce` answered.
    public static let useDPoPNonce = ErrorCode(rawValue: "use_dpop_nonce")
    /// The project's `app_attest` mode requires an attestation or assertion and none (or `unsupported`,
    /// where the project does not allow it) came.
    public static let attestationRequired = ErrorCode(rawValue: "attestation_required")
    /// The attestation or assertion was refused; `error.reason` names the check.
    public static let attestationInvalid = ErrorCode(rawValue: "attestation_invalid")
    /// The App Attest challenge is unknown, already used or expired.
    public static let challengeInvalid = ErrorCode(rawValue: "challenge_invalid")

    /// Every code above, then ``identityToken``: all the codes the server can answer (`slug_taken`
    /// only to the operator CLI, which creates projects). `OpenAPIContractTests` holds the list
    /// against the sources and `Server/openapi.json`.
    static let all: [ErrorCode] =
        [
            invalidRequest, payloadTooLarge, invalidAPIKey, invalidCredentials, identityTokenReplayed,
            externalUserIDChanged, unverifiedIdentifyDisabled, installationConflict, invalidSessionDuration,
            sessionTokenRequired, sessionNotFound, sessionExpired, sessionRevoked, notFound, methodNotAllowed,
            identitySecretLimitReached, lastIdentitySecret, rateLimited, slugTaken, internalError,
            serviceUnavailable, profileBlocked, webhookURLNotAllowed, operatorExists, dpopProofRequired,
            dpopProofInvalid, dpopKeyMismatch, dpopProofReplayed, useDPoPNonce, attestationRequired,
            attestationInvalid, challengeInvalid,
        ] + identityToken

    /// The identity-token failures, which identify answers with `TokenError`'s code unchanged.
    static let identityToken: [ErrorCode] = [
        TokenError.Code.invalidIdentityToken, .invalidSignature, .unsupportedAlgorithm, .identityTokenExpired,
        .identityTokenNotYetValid, .identityTokenLifetimeTooLong, .audienceMismatch, .invalidClaims,
        .invalidEmail, .invalidName, .invalidAvatarURL,
    ].map { ErrorCode(rawValue: $0.rawValue) }
}
