public import HTTPTypes
import Hummingbird
import TesseraTokens

/// An error as the wire answers it: `{"error": {"code", "message"}}` with its HTTP status and headers.
///
/// Core errors become wire errors in one place, ``init(_:)``; the few answers that only HTTP knows
/// (`405` with `Allow`, a broken framing) are made here directly.
public struct APIError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A wire error code (``ErrorCode``).
    public typealias Code = ErrorCode

    public var status: HTTPResponse.Status
    public var code: Code
    public var message: String
    /// Extra response headers (`Allow`, `Retry-After`).
    public var headers: HTTPFields
    /// A finer reason written as `error.reason` (`attestation_invalid`), if any.
    public var reason: String?

    public init(
        _ status: HTTPResponse.Status, _ code: Code, _ message: String, headers: HTTPFields = [:],
        reason: String? = nil
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
        self.reason = reason
    }

    /// The wire form of a core error: the one mapping from the domain's errors to HTTP.
    public init(_ error: CoreError) {
        var headers: HTTPFields = [:]
        if let seconds = error.retryAfterSeconds { headers[.retryAfter] = String(seconds) }
        guard let challenge = error.dpopChallenge else {
            self.init(Self.status(of: error.code), error.code, error.message, headers: headers, reason: error.reason)
            return
        }
        // RFC 9449 §7.1 and §8: a DPoP challenge, and the nonce to use when one is required.
        let reason = error.code == .useDPoPNonce ? "use_dpop_nonce" : "invalid_dpop_proof"
        headers[.wwwAuthenticate] = "DPoP error=\"\(reason)\", algs=\"ES256\""
        if let nonce = challenge.nonce { headers[.dpopNonce] = nonce }
        self.init(.unauthorized, error.code, error.message, headers: headers)
    }

    /// The status that answers an error code.
    static func status(of code: Code) -> HTTPResponse.Status {
        switch code {
        case .invalidRequest, .invalidSessionDuration, .webhookURLNotAllowed, .dpopProofRequired, .challengeInvalid:
            .badRequest
        case .dpopProofInvalid, .dpopKeyMismatch, .dpopProofReplayed, .useDPoPNonce: .unauthorized
        case .invalidAPIKey, .invalidCredentials, .identityTokenReplayed, .sessionNotFound, .sessionExpired,
            .sessionRevoked:
            .unauthorized
        case .unverifiedIdentifyDisabled, .sessionTokenRequired, .profileBlocked, .attestationRequired,
            .attestationInvalid:
            .forbidden
        case .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .externalUserIDChanged, .installationConflict, .identitySecretLimitReached, .lastIdentitySecret,
            .slugTaken, .operatorExists:
            .conflict
        case .payloadTooLarge: .contentTooLarge
        case .rateLimited: .tooManyRequests
        case .serviceUnavailable: .serviceUnavailable
        case .internalError: .internalServerError
        default:
            // An identity-token failure: the status its code has in the contract (400 or 401).
            TokenError(.init(rawValue: code.rawValue), "").httpStatus == 400 ? .badRequest : .unauthorized
        }
    }

    public var description: String { "\(status.code) \(code.rawValue): \(message)" }
}

extension HTTPField.Name {
    /// `DPoP` (RFC 9449 §4.1): the request's proof.
    static let dpop = HTTPField.Name("DPoP")!
    /// `DPoP-Nonce` (RFC 9449 §8): the nonce the server requires in the next proof.
    static let dpopNonce = HTTPField.Name("DPoP-Nonce")!
}
