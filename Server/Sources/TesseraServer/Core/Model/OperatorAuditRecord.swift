/// One entry of the deployment's audit of operator accounts: a sign-in, a failed one, a lockout, an
/// unlock, an invitation or a removal. Never a password, a code or a token.
public struct OperatorAuditRecord: Sendable, Hashable {
    /// What happened.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case signedIn = "operator.signed_in"
        case signInFailed = "operator.sign_in_failed"
        case locked = "operator.locked"
        case unlocked = "operator.unlocked"
        case invited = "operator.invited"
        case removed = "operator.removed"
        case passwordFailed = "operator.password_failed"
        case secretKeyRotated = "project.secret_key_rotated"
    }

    /// Time-ordered (`oau_…`): the newest entry has the greatest ID.
    public var id: String
    public var kind: Kind
    /// The operator account the entry is about (the email typed, for a failed sign-in).
    public var operatorEmail: String
    /// Who did it, when another operator did (an owner who invited, removed or unlocked); nil for the
    /// command line or the operator themselves.
    public var actorEmail: String?
    public var clientAddress: String?
    /// A short sentence without any secret ("until 16:45 UTC", "role support").
    public var detail: String?
    public var createdAt: Int64

    public init(
        id: String, kind: Kind, operatorEmail: String, actorEmail: String? = nil, clientAddress: String? = nil,
        detail: String? = nil, createdAt: Int64
    ) {
        self.id = id
        self.kind = kind
        self.operatorEmail = operatorEmail
        self.actorEmail = actorEmail
        self.clientAddress = clientAddress
        self.detail = detail
        self.createdAt = createdAt
    }
}
