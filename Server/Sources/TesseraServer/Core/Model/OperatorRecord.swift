/// An operator account of the deployment (not of a project): who may sign in to the console.
///
/// The store seals ``totpSecret`` under the master key on every write and opens it on every read,
/// so a record always holds the plaintext secret and the database never does.
public struct OperatorRecord: Sendable, Hashable {
    /// `opr_…`, time ordered.
    public var id: String
    /// Lowercased and trimmed; unique.
    public var email: String
    public var role: OperatorRole
    /// The bcrypt hash of the password; nil until the operator enrolled.
    public var passwordHash: String?
    /// The TOTP secret (RFC 6238); nil when the operator chose no second factor.
    public var totpSecret: [UInt8]?
    /// The last TOTP time step accepted at login: a code of that step or an earlier one is refused.
    public var totpLastStep: Int64?
    public var createdAt: Int64
    public var enrolledAt: Int64?
    public var lastLoginAt: Int64?

    public init(
        id: String, email: String, role: OperatorRole, passwordHash: String? = nil, totpSecret: [UInt8]? = nil,
        totpLastStep: Int64? = nil, createdAt: Int64, enrolledAt: Int64? = nil, lastLoginAt: Int64? = nil
    ) {
        self.id = id
        self.email = email
        self.role = role
        self.passwordHash = passwordHash
        self.totpSecret = totpSecret
        self.totpLastStep = totpLastStep
        self.createdAt = createdAt
        self.enrolledAt = enrolledAt
        self.lastLoginAt = lastLoginAt
    }

    /// Whether the operator has set a password (completed an enrollment).
    public var isEnrolled: Bool { passwordHash != nil }
}
