/// The settings of one project, as the admin API reads and writes them.
public struct ProjectSettings: Sendable, Hashable {
    /// Whether `identify` accepts the client-asserted `user_id` form.
    public var allowUnverifiedIdentify = false
    /// Whether identity tokens must carry an `aud` naming the project.
    public var requireAudience = false
    /// When set, identity tokens must carry exactly this `iss`.
    public var expectedIssuer: String? = nil
    /// The longest an identity token may live from now (its `exp`).
    public var maxIdentityTokenLifetimeSeconds: Int64 = 3600
    /// The clock leeway applied to `exp`, `nbf` and `iat`.
    public var leewaySeconds: Int64 = 60
    /// The longest, and default, lifetime of an anonymous session.
    public var anonymousSessionMinutes: Int64 = 525_600
    /// The longest, and default, lifetime of an identified session.
    public var identifiedSessionMinutes: Int64 = 43_200
    /// How many anonymous starts and failed identifies one client may make per minute.
    public var rateLimits = RateLimits()
    /// Whether new sessions are bound to the device key of the DPoP proof they were created with.
    public var sessionBinding = SessionBinding.optional
    /// Whether every DPoP proof must carry a nonce the server issued (`DPoP-Nonce`, RFC 9449 §8).
    public var dpopNonceRequired = false
    /// The most live sessions one profile may hold; a new one beyond it ends the least recently
    /// authenticated (`session.ended`, reason `evicted`). Nil: unlimited.
    public var maxSessionsPerProfile: Int64? = nil
    /// Whether anonymous starts and identifies must come from the project's genuine app on a genuine
    /// Apple device (App Attest), and how strictly.
    public var appAttest = AppAttestSettings()

    /// How a project binds sessions to device keys (RFC 9449 proofs).
    public enum SessionBinding: String, Sendable, Hashable, CaseIterable {
        /// Proofs are ignored; no session is bound.
        case off
        /// A session started or identified with a proof is bound to its key (the default).
        case optional
        /// Anonymous starts and identifies without a proof are refused (`dpop_proof_required`).
        case required
    }

    public init() {}

    /// Session durations clients may ask for, in minutes.
    public static let sessionMinutesRange: ClosedRange<Int64> = 5...525_600
    /// Identity-token lifetimes a project may allow, in seconds.
    public static let identityTokenLifetimeRange: ClosedRange<Int64> = 1...86_400
    /// Leeways a project may set, in seconds.
    public static let leewayRange: ClosedRange<Int64> = 0...600
    /// Session limits per profile a project may set.
    public static let maxSessionsPerProfileRange: ClosedRange<Int64> = 1...1000
}
