/// One sealed column value as the database holds it, for sealing old plaintext values and for
/// `tessera keys rewrap`.
public struct SealedCell: Sendable, Hashable {
    /// Which column the value is in.
    public enum Kind: String, Sendable, CaseIterable {
        /// `identity_secrets.secret` (text: the sealed value's ASCII form).
        case identitySecret = "identity_secrets.secret"
        /// `session_keys.private_key` (bytes).
        case sessionKey = "session_keys.private_key"
        /// `webhooks.secret` (text).
        case webhookSecret = "webhooks.secret"
        /// `webhooks.previous_secret` (text), while a rotated-out secret still signs.
        case webhookPreviousSecret = "webhooks.previous_secret"
        /// `operators.totp_secret` (text), of the deployment: its project ID is `""`.
        case operatorTOTPSecret = "operators.totp_secret"
    }

    public var kind: Kind
    public var projectID: String
    /// The row's key within the project: the `kid`, the webhook ID, or the operator ID.
    public var rowID: String
    /// The value as stored: a sealed value, or plaintext written by an older version.
    public var stored: [UInt8]

    public init(kind: Kind, projectID: String, rowID: String, stored: [UInt8]) {
        self.kind = kind
        self.projectID = projectID
        self.rowID = rowID
        self.stored = stored
    }

    /// The binding the value is sealed with.
    public var binding: SecretBinding {
        switch kind {
        case .identitySecret: return .identitySecret(projectID: projectID, kid: rowID)
        case .sessionKey: return .sessionKey(projectID: projectID, kid: rowID)
        case .webhookSecret: return .webhookSecret(projectID: projectID, webhookID: rowID)
        case .webhookPreviousSecret: return .webhookPreviousSecret(projectID: projectID, webhookID: rowID)
        case .operatorTOTPSecret: return .operatorTOTPSecret(operatorID: rowID)
        }
    }
}
