/// One counter of the rate limiter: what is counted, and for whom.
public struct RateLimitKey: Sendable, Hashable, Comparable {
    /// What a counter counts.
    public enum Bucket: String, Sendable, Hashable {
        case anonymousStart = "anonymous_start"
        /// App Attest challenges issued to one client address (limited as anonymous starts are).
        case attestationChallenge = "attestation_challenge"
        case failedIdentifyByAddress = "failed_identify_address"
        case failedIdentifyByInstallation = "failed_identify_installation"
        case failedSessionLookup = "failed_session_lookup"
        /// Failed console logins from one client address (project ID `""`: the whole server).
        case consoleLoginByAddress = "console_login_address"
        /// Failed console logins for one email (project ID `""`).
        case consoleLoginByEmail = "console_login_email"
        /// Failed console logins for one email from one client address (`EMAIL ADDRESS`, project `""`).
        case consoleLoginByEmailAndAddress = "console_login_email_address"
        /// Wrong passwords at destructive console actions, per operator ID (project `""`).
        case consoleReauthentication = "console_reauthentication"
    }

    /// The project, or `""` for counters of the whole server (a session token names no project).
    public var projectID: String
    public var bucket: Bucket
    /// The client address or the installation ID.
    public var key: String

    public init(projectID: String, bucket: Bucket, key: String) {
        self.projectID = projectID
        self.bucket = bucket
        self.key = key
    }

    public static func < (lhs: RateLimitKey, rhs: RateLimitKey) -> Bool {
        (lhs.projectID, lhs.bucket.rawValue, lhs.key) < (rhs.projectID, rhs.bucket.rawValue, rhs.key)
    }
}

/// A fixed counting window: `[start, start + seconds)`.
public struct RateLimitWindow: Sendable, Hashable {
    public var start: Int64
    public var seconds: Int64

    /// The window of `seconds` that contains `now` (windows start at multiples of `seconds`).
    public init(containing now: Int64, seconds: Int64 = 60) {
        self.seconds = seconds
        self.start = now - ((now % seconds) + seconds) % seconds
    }

    /// When the window ends and its counters reset.
    public var end: Int64 { start + seconds }

    /// The seconds from `now` to the end of the window, at least 1 (the `Retry-After` value).
    public func retryAfter(now: Int64) -> Int64 { max(1, end - now) }
}

/// A hit to count inside another write (an anonymous start counts itself in its own transaction).
public struct RateLimitCharge: Sendable, Hashable {
    public var key: RateLimitKey
    public var window: RateLimitWindow
    /// The most hits the window allows; the hit that would exceed it is refused and not counted.
    public var limit: Int64

    public init(key: RateLimitKey, window: RateLimitWindow, limit: Int64) {
        self.key = key
        self.window = window
        self.limit = limit
    }

    /// The error of a refused hit at `now`: `rate_limited`, to retry when the window ends.
    public func exceeded(now: Int64) -> CoreError {
        CoreError.rateLimited(retryAfter: window.retryAfter(now: now))
    }
}
