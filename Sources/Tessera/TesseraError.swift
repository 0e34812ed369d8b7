import Foundation

/// The one error type of the Tessera SDK.
///
/// `code` is open: it carries every code of the server's wire contract, the SDK's own codes, and
/// any code a newer server may send that this SDK does not know yet. Decide what to do with
/// ``isTransient`` (try again later, the session is kept) and ``endsSession`` (the session is gone).
public struct TesseraError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A machine-readable error code; `rawValue` is the wire code for server errors.
    public struct Code: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible,
        ExpressibleByStringLiteral
    {
        public let rawValue: String

        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }
        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
        public var description: String { rawValue }

        // MARK: Server codes (API.md, "Error codes")
        public static let invalidRequest: Code = "invalid_request"
        public static let payloadTooLarge: Code = "payload_too_large"
        public static let invalidAPIKey: Code = "invalid_api_key"
        public static let invalidCredentials: Code = "invalid_credentials"
        public static let invalidIdentityToken: Code = "invalid_identity_token"
        public static let invalidSignature: Code = "invalid_signature"
        public static let unsupportedAlgorithm: Code = "unsupported_algorithm"
        public static let identityTokenExpired: Code = "identity_token_expired"
        public static let identityTokenNotYetValid: Code = "identity_token_not_yet_valid"
        public static let identityTokenLifetimeTooLong: Code = "identity_token_lifetime_too_long"
        public static let identityTokenReplayed: Code = "identity_token_replayed"
        public static let audienceMismatch: Code = "audience_mismatch"
        public static let invalidClaims: Code = "invalid_claims"
        public static let invalidEmail: Code = "invalid_email"
        public static let invalidName: Code = "invalid_name"
        public static let invalidAvatarURL: Code = "invalid_avatar_url"
        public static let externalUserIDChanged: Code = "external_user_id_changed"
        public static let unverifiedIdentifyDisabled: Code = "unverified_identify_disabled"
        public static let installationConflict: Code = "installation_conflict"
        public static let invalidSessionDuration: Code = "invalid_session_duration"
        public static let sessionNotFound: Code = "session_not_found"
        public static let sessionExpired: Code = "session_expired"
        public static let sessionRevoked: Code = "session_revoked"
        public static let notFound: Code = "not_found"
        /// A session bound to a device key was presented without its key's proof.
        public static let dpopProofRequired: Code = "dpop_proof_required"
        /// A device-key proof did not verify (signature, header or a claim).
        public static let dpopProofInvalid: Code = "dpop_proof_invalid"
        /// A proof signed by another key than the one the session is bound to.
        public static let dpopKeyMismatch: Code = "dpop_key_mismatch"
        /// A proof sent a second time where each may be used once.
        public static let dpopProofReplayed: Code = "dpop_proof_replayed"
        /// The server wants its nonce in the proof (the SDK sends the request again once with it).
        public static let useDPoPNonce: Code = "use_dpop_nonce"
        public static let rateLimited: Code = "rate_limited"
        /// The project's App Attest mode requires evidence at this request and none came (403).
        public static let attestationRequired: Code = "attestation_required"
        /// The App Attest evidence did not verify; ``TesseraError/reason`` names the check (403).
        public static let attestationInvalid: Code = "attestation_invalid"
        /// The App Attest challenge is unknown, used or expired (400).
        public static let challengeInvalid: Code = "challenge_invalid"

        // MARK: The SDK's own codes
        /// The request did not reach the server or its answer did not come back (offline, DNS, TLS, reset).
        public static let network: Code = "network"
        /// The request timed out.
        public static let timeout: Code = "timeout"
        /// The server answered 5xx (a bug or an unavailable database); the session is kept.
        public static let serverUnavailable: Code = "server_unavailable"
        /// The server's answer could not be understood.
        public static let invalidResponse: Code = "invalid_response"
        /// The task was cancelled. Never ends a session.
        public static let cancelled: Code = "cancelled"
        /// A newer identify, sign-out or reset started while this call was running; its result was dropped.
        public static let superseded: Code = "superseded"
        /// The credential store cannot be read or written right now (for example the keychain before first unlock).
        public static let storageUnavailable: Code = "storage_unavailable"
        /// The stored state was tampered with or cannot be decrypted; it was removed.
        public static let storageCorrupted: Code = "storage_corrupted"
        /// The credential store cannot work as configured (a missing keychain entitlement); not transient.
        public static let storageMisconfigured: Code = "storage_misconfigured"
        /// Access to the credential store was refused (a keychain prompt cancelled); not transient.
        public static let storageAccessDenied: Code = "storage_access_denied"
        /// The call needs a session and there is none.
        public static let noSession: Code = "no_session"
        /// The identity-token provider gave no token.
        public static let identityTokenUnavailable: Code = "identity_token_unavailable"
        /// The identity-token provider did not answer within ``TesseraConfiguration/identityTokenTimeout``.
        public static let identityTokenProviderTimedOut: Code = "identity_token_provider_timed_out"
        /// The configuration cannot work (for example an empty publishable key).
        public static let invalidConfiguration: Code = "invalid_configuration"
    }

    /// What went wrong, for code.
    public var code: Code
    /// What went wrong, for people. Never contains a credential.
    public var message: String
    /// The HTTP status of the server's answer, when there was one.
    public var httpStatus: Int?
    /// The server's `X-Request-Id`, for support requests.
    public var requestID: String?
    /// The server's `Retry-After`, when it sent one.
    public var retryAfter: Duration?
    /// The server's `error.reason`: with `attestation_invalid`, the App Attest check that failed
    /// (`key_id`, `counter`, `app_id`, …).
    public var reason: String?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The machine-readable code.
    ///   - message: Human-readable text; never put a credential in it.
    ///   - httpStatus: The HTTP status, when the server answered.
    ///   - requestID: The server's `X-Request-Id`.
    ///   - retryAfter: The server's `Retry-After`.
    ///   - reason: The server's `error.reason`.
    public init(
        _ code: Code, message: String? = nil, httpStatus: Int? = nil, requestID: String? = nil,
        retryAfter: Duration? = nil, reason: String? = nil
    ) {
        self.code = code
        self.message = message ?? code.rawValue
        self.httpStatus = httpStatus
        self.requestID = requestID
        self.retryAfter = retryAfter
        self.reason = reason
    }

    /// Whether trying again later may succeed: offline, timeouts, 5xx, 429 and storage that is
    /// temporarily unavailable. A transient error never ends a session.
    public var isTransient: Bool {
        switch code {
        case .network, .timeout, .serverUnavailable, .rateLimited, .storageUnavailable: return true
        default: return (httpStatus ?? 0) >= 500
        }
    }

    /// Whether the session is gone for good. Only `session_not_found`, `session_expired` and
    /// `session_revoked` end a session; every other error, including other 401s, keeps it.
    public var endsSession: Bool {
        code == .sessionNotFound || code == .sessionExpired || code == .sessionRevoked
    }

    public var description: String {
        var text = "TesseraError(\(code.rawValue)"
        if let httpStatus { text += ", HTTP \(httpStatus)" }
        if let reason { text += ", reason \(reason)" }
        text += "): \(message)"
        if let requestID { text += " [request \(requestID)]" }
        return text
    }

    /// Maps any error thrown by a transport or the system to a `TesseraError`.
    static func wrapping(_ error: any Error) -> TesseraError {
        if let error = error as? TesseraError { return error }
        if error is CancellationError { return TesseraError(.cancelled, message: "The task was cancelled.") }
        if let error = error as? URLError {
            switch error.code {
            case .timedOut: return TesseraError(.timeout, message: "The request timed out.")
            case .cancelled: return TesseraError(.cancelled, message: "The request was cancelled.")
            default: return TesseraError(.network, message: "Network error (URLError \(error.code.rawValue)).")
            }
        }
        return TesseraError(.network, message: "Transport error: \(type(of: error)).")
    }
}
