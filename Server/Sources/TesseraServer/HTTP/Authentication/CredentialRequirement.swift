/// The credential an endpoint accepts; ``Authenticator`` resolves it before the handler runs.
enum CredentialRequirement: Sendable, Equatable {
    /// None: the endpoint is public (health, metrics, the contract, JWKS).
    case none
    /// The publishable key (`pk_…`), which names the app's project.
    case publishableKey
    /// The secret key (`sk_…`): the admin API of its project.
    case secretKey
    /// A session token (`st_…`), or a session JWT that has not expired.
    case session
    /// A session token, or a session JWT even past its own `exp` while its session lives
    /// (authenticate only: an expired JWT may refresh itself).
    case sessionOrExpiredJWT
    /// The publishable key or a session (identify: anonymous callers and signed-in ones).
    case publishableKeyOrSession

    /// What the endpoint takes, as the `invalid_credentials` answer to another kind says it.
    var expected: String {
        switch self {
        case .none: "no credential"
        case .publishableKey: "the publishable key (pk_…)"
        case .secretKey: "the secret key (sk_…)"
        case .session, .sessionOrExpiredJWT: "a session token (st_…) or session JWT"
        case .publishableKeyOrSession: "the publishable key, a session token or a session JWT"
        }
    }
}
