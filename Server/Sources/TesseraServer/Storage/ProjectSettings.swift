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

    public init() {}

    /// Session durations clients may ask for, in minutes.
    public static let sessionMinutesRange: ClosedRange<Int64> = 5...525_600
    /// Identity-token lifetimes a project may allow, in seconds.
    public static let identityTokenLifetimeRange: ClosedRange<Int64> = 1...86_400
    /// Leeways a project may set, in seconds.
    public static let leewayRange: ClosedRange<Int64> = 0...600
}
