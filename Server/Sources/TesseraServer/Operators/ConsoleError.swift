/// A failure of an operator account action: what the console shows, with a stable code.
///
/// Login failures say nothing about which part was wrong (``invalidLogin`` for an unknown email, a
/// wrong password or an account not enrolled yet), so the console cannot be used to find accounts.
/// The console writes ``code`` in `data-code` and ``message`` as the text of its alert.
public enum ConsoleError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The email and password do not match an enrolled operator.
    case invalidLogin
    /// The password is right and the operator has TOTP: the code is needed too.
    case totpRequired
    /// The TOTP code is wrong, outside the ±30 s window, or already used.
    case invalidTOTP
    /// Too many failed logins from this address or for this email; retry after the seconds given.
    case rateLimited(retryAfter: Int64)
    /// Too many failed sign-ins for this email from this address: refused until `until` (Unix
    /// seconds), unless an owner unlocks it first.
    case locked(until: Int64, retryAfter: Int64)
    /// The enrollment link is unknown, used or older than 15 minutes.
    case enrollmentExpired
    /// The password breaks a rule; the message says which.
    case weakPassword(String)
    /// The email is not an address.
    case invalidEmail
    /// Another operator has this email.
    case operatorExists
    /// The operator does not exist (any more).
    case operatorNotFound
    /// The database cannot answer; retry after the seconds given.
    case unavailable(retryAfter: Int64)

    /// The codes, as the console writes them (`data-code`).
    public enum Code: String, Sendable, CaseIterable {
        case invalidLogin = "invalid_login"
        case totpRequired = "totp_required"
        case invalidTOTP = "invalid_totp"
        case rateLimited = "rate_limited"
        case enrollmentExpired = "enrollment_expired"
        case weakPassword = "weak_password"
        case invalidEmail = "invalid_email"
        case operatorExists = "operator_exists"
        case operatorNotFound = "operator_not_found"
        case unavailable = "service_unavailable"
    }

    public var code: Code {
        switch self {
        case .invalidLogin: .invalidLogin
        case .totpRequired: .totpRequired
        case .invalidTOTP: .invalidTOTP
        case .rateLimited, .locked: .rateLimited
        case .enrollmentExpired: .enrollmentExpired
        case .weakPassword: .weakPassword
        case .invalidEmail: .invalidEmail
        case .operatorExists: .operatorExists
        case .operatorNotFound: .operatorNotFound
        case .unavailable: .unavailable
        }
    }

    /// A sentence for people, without any credential.
    public var message: String {
        switch self {
        case .invalidLogin: "The email or password is not right."
        case .totpRequired: "Enter the code of your authenticator app."
        case .invalidTOTP: "The authenticator code is not right, or was already used."
        case .rateLimited(let seconds): "Too many failed logins; try again in \(Self.minutes(seconds))."
        case .locked(let until, _):
            "Too many failed sign-ins for this email from your address: locked until \(OperatorAccounts.clockTime(until)). An owner can unlock it on the Operators page (or: tessera operators unlock --email …)."
        case .enrollmentExpired: "This enrollment link has expired or was already used; ask an owner for a new one."
        case .weakPassword(let rule): rule
        case .invalidEmail: "This is not an email address."
        case .operatorExists: "An operator with this email already exists."
        case .operatorNotFound: "There is no such operator."
        case .unavailable: "The database is not available; try again in a moment."
        }
    }

    /// The seconds after which the same attempt may succeed, for `Retry-After`.
    public var retryAfterSeconds: Int64? {
        switch self {
        case .rateLimited(let seconds), .unavailable(let seconds), .locked(_, let seconds): seconds
        default: nil
        }
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// "1 minute", "12 minutes": the wait rounded up to whole minutes.
    private static func minutes(_ seconds: Int64) -> String {
        let minutes = max(1, (seconds + 59) / 60)
        return minutes == 1 ? "1 minute" : "\(minutes) minutes"
    }
}
