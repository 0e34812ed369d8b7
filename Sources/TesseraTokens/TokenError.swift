/// Why a token was refused.
///
/// The ``code`` of an identity-token failure is the error code the Tessera wire contract uses, so a
/// server can answer with it unchanged. The ``message`` is for people and never contains the token.
public struct TokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A machine-readable reason, open so that new codes do not break callers.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Malformed: not a compact JWS, bad base64url, bad JSON, oversized, a forbidden header.
        public static let invalidIdentityToken = Code(rawValue: "invalid_identity_token")
        /// The MAC or signature does not verify, or the `kid` names no known key.
        public static let invalidSignature = Code(rawValue: "invalid_signature")
        /// The header's `alg` is not the one algorithm this token kind is signed with.
        public static let unsupportedAlgorithm = Code(rawValue: "unsupported_algorithm")
        /// `exp` has passed, leeway included.
        public static let identityTokenExpired = Code(rawValue: "identity_token_expired")
        /// `nbf` or `iat` lies in the future, leeway included.
        public static let identityTokenNotYetValid = Code(rawValue: "identity_token_not_yet_valid")
        /// `exp` lies further ahead than the project's maximum identity-token lifetime.
        public static let identityTokenLifetimeTooLong = Code(rawValue: "identity_token_lifetime_too_long")
        /// `aud` names neither the project's ID nor its slug, or is missing where required.
        public static let audienceMismatch = Code(rawValue: "audience_mismatch")
        /// A claim is missing, of the wrong type or out of range.
        public static let invalidClaims = Code(rawValue: "invalid_claims")
        /// The `email` claim is not a syntactically valid address.
        public static let invalidEmail = Code(rawValue: "invalid_email")
        /// The display-name claim is empty, too long or contains control characters.
        public static let invalidName = Code(rawValue: "invalid_name")
        /// The avatar claim is not an `https` URL of at most 2048 characters.
        public static let invalidAvatarURL = Code(rawValue: "invalid_avatar_url")
        /// A malformed session JWT, or one with the wrong `typ`. Not a wire code.
        public static let invalidToken = Code(rawValue: "invalid_token")
        /// A session JWT whose `exp` has passed. Not a wire code.
        public static let tokenExpired = Code(rawValue: "token_expired")
        /// A session JWT whose `nbf` lies in the future. Not a wire code.
        public static let tokenNotYetValid = Code(rawValue: "token_not_yet_valid")
        /// A session JWT whose `kind` the verifier was told not to accept
        /// (``SessionJWTVerifier/init(jwks:issuer:audience:allowedKinds:)``). Not a wire code.
        public static let sessionKindNotAllowed = Code(rawValue: "session_kind_not_allowed")
        /// A session bound to a device key was presented without a DPoP proof, or with the `Bearer`
        /// scheme (RFC 9449).
        public static let dpopProofRequired = Code(rawValue: "dpop_proof_required")
        /// The DPoP proof is malformed, its signature does not verify, or a claim (`htm`, `htu`,
        /// `iat`, `ath`, `jti`) does not fit the request.
        public static let dpopProofInvalid = Code(rawValue: "dpop_proof_invalid")
        /// The DPoP proof is signed by another key than the one the session is bound to.
        public static let dpopKeyMismatch = Code(rawValue: "dpop_key_mismatch")
        /// The server requires a nonce it issued (`DPoP-Nonce`) in the proof, and this one has none or
        /// an expired one (RFC 9449 §8).
        public static let useDPoPNonce = Code(rawValue: "use_dpop_nonce")
    }

    /// The reason, as a wire code.
    public let code: Code
    /// Human-readable detail.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The HTTP status the wire contract gives this failure: 400 for claim-content errors, else 401.
    public var httpStatus: Int {
        switch code {
        case .invalidClaims, .invalidEmail, .invalidName, .invalidAvatarURL: 400
        default: 401
        }
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// A key or key set that cannot be used: a short secret, a malformed `kid`, too many secrets, a bad JWK.
public struct KeyConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public let message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
