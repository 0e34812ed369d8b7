/// Why a webhook delivery was refused by ``WebhookVerifier``.
///
/// The ``message`` is for logs and never contains the secret, a signature or the body.
public struct WebhookVerificationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A machine-readable reason, open so that new codes do not break callers.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// `webhook-id`, `webhook-timestamp` or `webhook-signature` is missing or empty.
        public static let missingHeaders = Code(rawValue: "missing_headers")
        /// `webhook-timestamp` is not a whole number of Unix seconds.
        public static let invalidTimestamp = Code(rawValue: "invalid_timestamp")
        /// The delivery was signed longer ago than the tolerance: perhaps a replay.
        public static let timestampTooOld = Code(rawValue: "timestamp_too_old")
        /// The delivery claims to be signed further in the future than the tolerance.
        public static let timestampTooNew = Code(rawValue: "timestamp_too_new")
        /// No `v1` signature in `webhook-signature` matches the body under any of the secrets.
        public static let noMatchingSignature = Code(rawValue: "no_matching_signature")
        /// The secret is not `whsec_` and base64 of 24 to 64 bytes.
        public static let invalidSecret = Code(rawValue: "invalid_secret")
    }

    /// The reason.
    public let code: Code
    /// Human-readable detail.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
