/// What one delivery attempt came to, for the delivery log and the retry schedule.
public struct WebhookOutcome: Sendable, Hashable {
    /// The verdict on the attempt.
    public enum Kind: String, Sendable, Hashable {
        /// A 2xx answer.
        case delivered
        /// `410 Gone`: the endpoint asks to be disabled.
        case gone
        /// Anything else: retried later.
        case failed
    }

    /// Why an attempt failed without an HTTP answer.
    public enum ErrorKind: String, Sendable, Hashable {
        /// No complete answer within the time limit.
        case timeout
        /// The connection was refused or reset.
        case refused
        /// The TLS handshake failed (certificate, protocol).
        case tls
        /// The name did not resolve.
        case dns
        /// The URL, or an address its name resolves to, breaks the outbound-safety rules.
        case urlNotAllowed = "url_not_allowed"
        /// Any other transport failure.
        case other
    }

    public var kind: Kind
    /// The answer's status code, when there was an answer.
    public var statusCode: Int?
    /// Why there was no answer, when there was none.
    public var error: ErrorKind?
    /// How long the attempt took, in milliseconds.
    public var durationMilliseconds: Int64
    /// The first ``WebhookSender/maximumResponseBytes`` of the answer's body, when there was an answer.
    public var responseBody: [UInt8]? = nil

    public init(kind: Kind, statusCode: Int? = nil, error: ErrorKind? = nil, durationMilliseconds: Int64) {
        self.kind = kind
        self.statusCode = statusCode
        self.error = error
        self.durationMilliseconds = durationMilliseconds
    }
}
