/// The rate limits of one project: how many attempts one client may make per minute.
///
/// Every limit counts in fixed one-minute windows kept in the shared store, so it holds whatever
/// the number of server processes. `nil` means unlimited. The defaults are generous enough for
/// many real users behind one carrier-grade NAT address and still stop scripted abuse.
public struct RateLimits: Sendable, Hashable {
    /// Anonymous starts (`POST /v1/sessions/anonymous`, new or restored) per client address.
    public var anonymousStartsPerMinute: Int64? = 600
    /// Failed identifies (an identity token that does not verify, or is replayed) per client address.
    public var failedIdentifiesPerMinute: Int64? = 60
    /// Failed identifies per installation (identify called with an installation's anonymous session).
    public var failedIdentifiesPerInstallationPerMinute: Int64? = 10

    public init() {}

    /// The limits a project may set (when not unlimited).
    public static let range: ClosedRange<Int64> = 1...1_000_000

    /// The wire names of the limits (the `rate_limits` object of the admin API), in order.
    static let wireNames = [
        "anonymous_starts_per_minute", "failed_identifies_per_minute",
        "failed_identifies_per_installation_per_minute",
    ]

    /// The limits by wire name.
    var wireFields: [(String, Int64?)] {
        zip(
            Self.wireNames,
            [anonymousStartsPerMinute, failedIdentifiesPerMinute, failedIdentifiesPerInstallationPerMinute]
        ).map { ($0, $1) }
    }

    /// Sets the limit with this wire name; false for an unknown name.
    mutating func set(_ name: String, to value: Int64?) -> Bool {
        switch name {
        case "anonymous_starts_per_minute": anonymousStartsPerMinute = value
        case "failed_identifies_per_minute": failedIdentifiesPerMinute = value
        case "failed_identifies_per_installation_per_minute": failedIdentifiesPerInstallationPerMinute = value
        default: return false
        }
        return true
    }
}
