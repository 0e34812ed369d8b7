/// The row and column a sealed value belongs to, authenticated with it (AES-GCM associated data),
/// so a sealed value copied into another row or column no longer opens.
public struct SecretBinding: Sendable, Hashable {
    /// The table, such as `identity_secrets`.
    public var table: String
    /// The column, such as `secret`.
    public var column: String
    /// The project the row belongs to.
    public var projectID: String
    /// The row's own key within the project (a `kid`, a webhook ID).
    public var rowID: String

    public init(table: String, column: String, projectID: String, rowID: String) {
        self.table = table
        self.column = column
        self.projectID = projectID
        self.rowID = rowID
    }

    /// An identity secret (`identity_secrets.secret`).
    public static func identitySecret(projectID: String, kid: String) -> SecretBinding {
        SecretBinding(table: "identity_secrets", column: "secret", projectID: projectID, rowID: kid)
    }

    /// A session-JWT signing key (`session_keys.private_key`).
    public static func sessionKey(projectID: String, kid: String) -> SecretBinding {
        SecretBinding(table: "session_keys", column: "private_key", projectID: projectID, rowID: kid)
    }

    /// A webhook's signing secret (`webhooks.secret`).
    public static func webhookSecret(projectID: String, webhookID: String) -> SecretBinding {
        SecretBinding(table: "webhooks", column: "secret", projectID: projectID, rowID: webhookID)
    }

    /// A webhook's rotated-out secret (`webhooks.previous_secret`).
    public static func webhookPreviousSecret(projectID: String, webhookID: String) -> SecretBinding {
        SecretBinding(table: "webhooks", column: "previous_secret", projectID: projectID, rowID: webhookID)
    }

    /// An operator's TOTP secret (`operators.totp_secret`); operators belong to no project.
    public static func operatorTOTPSecret(operatorID: String) -> SecretBinding {
        SecretBinding(table: "operators", column: "totp_secret", projectID: "", rowID: operatorID)
    }

    /// The associated data: every part, NUL-separated after a version tag.
    var associatedData: [UInt8] {
        Array(["tessera-sealed-v1", table, column, projectID, rowID].joined(separator: "\u{0}").utf8)
    }
}
