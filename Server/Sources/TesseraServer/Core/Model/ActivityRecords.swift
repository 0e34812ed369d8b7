/// One profile seen active on one installation on one day: a row of `profile_activity`.
///
/// Only identifiers are kept (no address, no user agent): erasing the profile replaces its ID in
/// these rows with a fresh random one, so past counts stay right and nothing points back to it.
public struct ActivityMark: Sendable, Hashable {
    public var projectID: String
    /// Days since 1970-01-01 (UTC).
    public var day: Int64
    public var profileID: String
    /// The installation the profile was active on; empty for a session without one.
    public var installationID: String
    /// Whether the session was identified (`verified` or `unverified`) rather than anonymous.
    public var identified: Bool

    public init(projectID: String, day: Int64, profileID: String, installationID: String, identified: Bool) {
        self.projectID = projectID
        self.day = day
        self.profileID = profileID
        self.installationID = installationID
        self.identified = identified
    }
}

/// A count added to a project's day: an identify outcome (`identify.signed_in`), a refusal
/// (`identify.refused.expired_token`) or an App Attest check (`app_attest.checks`,
/// `app_attest.would_refuse`). Rows of `daily_tallies`.
public struct ActivityTally: Sendable, Hashable {
    public var projectID: String
    public var day: Int64
    public var name: String
    public var count: Int64

    public init(projectID: String, day: Int64, name: String, count: Int64) {
        self.projectID = projectID
        self.day = day
        self.name = name
        self.count = count
    }
}

/// Distinct active profiles and installations over a span of days.
public struct ActivityCounts: Sendable, Hashable {
    /// Distinct profiles active in any kind.
    public var profiles = 0
    /// Distinct profiles active with an anonymous session.
    public var anonymousProfiles = 0
    /// Distinct profiles active with an identified session.
    public var identifiedProfiles = 0
    /// Distinct installations active (sessions without an installation are not counted).
    public var installations = 0
    /// Distinct installations active with an anonymous session.
    public var anonymousInstallations = 0
    /// Distinct installations active with an identified session.
    public var identifiedInstallations = 0

    public init() {}
}

/// One day of a project's activity: its distinct actives and its tallies.
public struct ActivityDay: Sendable, Hashable {
    public var day: Int64
    public var counts = ActivityCounts()
    /// The day's tallies by name (identify outcomes, App Attest checks).
    public var tallies: [String: Int64] = [:]

    public init(day: Int64) { self.day = day }

    /// Identifies that turned an anonymous profile into an identified one that day (`promoted` and
    /// `merged` outcomes).
    public var conversions: Int64 {
        tallies["identify.promoted", default: 0] + tallies["identify.merged", default: 0]
    }
}

/// A project's activity: every day of a span, oldest first, and the distinct actives of the last 1,
/// 7 and 30 days.
public struct ActivitySummary: Sendable, Hashable {
    /// Each day from the first to `today`, oldest first (days without activity included).
    public var days: [ActivityDay]
    /// Distinct actives of the last `n` days ending today, for `n` in 1, 7 and 30.
    public var windows: [Int: ActivityCounts]

    public init(days: [ActivityDay], windows: [Int: ActivityCounts]) {
        self.days = days
        self.windows = windows
    }

    /// The windows the summary counts, in days.
    public static let windowDays = [1, 7, 30]
}

/// How both backends read and write the counted activity (`activity_counts`, migration 18): rows
/// named `active.METRIC` hold a day's distinct subjects, rows named `latest.METRIC` how many
/// subjects have that day as their latest active day, for the six metrics of ``ActivityCounts``.
enum ActivitySQL {
    /// The metrics, each with the column of `profile_activity` that names its subject and the kind
    /// of row it counts (nil: either kind).
    static let metrics: [(name: String, subject: String, identified: Bool?)] = [
        ("profiles", "profile_id", nil), ("profiles.anonymous", "profile_id", false),
        ("profiles.identified", "profile_id", true), ("installations", "installation_id", nil),
        ("installations.anonymous", "installation_id", false), ("installations.identified", "installation_id", true),
    ]

    /// Builds the summary from the `activity_counts` rows (of the days from `today` minus 29, or
    /// `firstDay` if earlier, to `today`) and the tallies each backend read. A window of `n` days is
    /// the subjects whose latest active day is one of its days (exact while no row is dated after
    /// `today`).
    static func summary(
        firstDay: Int64, today: Int64, counts: [(day: Int64, name: String, count: Int64)],
        tallies: [(day: Int64, name: String, count: Int64)]
    ) -> ActivitySummary {
        var days = (firstDay...max(firstDay, today)).map(ActivityDay.init(day:))
        var windows: [Int: ActivityCounts] = [:]
        for window in ActivitySummary.windowDays { windows[window] = ActivityCounts() }
        for row in counts where row.day <= today {
            if row.name.hasPrefix("active."), row.day >= firstDay {
                days[Int(row.day - firstDay)].counts.add(String(row.name.dropFirst(7)), Int(row.count))
            } else if row.name.hasPrefix("latest.") {
                for window in ActivitySummary.windowDays where row.day > today - Int64(window) {
                    windows[window]?.add(String(row.name.dropFirst(7)), Int(row.count))
                }
            }
        }
        for row in tallies where row.day >= firstDay && row.day <= today {
            days[Int(row.day - firstDay)].tallies[row.name, default: 0] += row.count
        }
        return ActivitySummary(days: days, windows: windows)
    }

    /// The first day of `activity_counts` a summary of `firstDay` to `today` reads.
    static func firstCountedDay(firstDay: Int64, today: Int64) -> Int64 {
        min(firstDay, today - Int64(ActivitySummary.windowDays.max() ?? 1) + 1)
    }

    /// The day (since 1970-01-01, UTC) of a Unix time.
    static func day(of seconds: Int64) -> Int64 { seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400 }
}

extension ActivityCounts {
    /// Adds `value` to the count of a metric of ``ActivitySQL/metrics`` (`profiles.anonymous`…).
    mutating func add(_ metric: String, _ value: Int) {
        switch metric {
        case "profiles": profiles += value
        case "profiles.anonymous": anonymousProfiles += value
        case "profiles.identified": identifiedProfiles += value
        case "installations": installations += value
        case "installations.anonymous": anonymousInstallations += value
        case "installations.identified": identifiedInstallations += value
        default: break
        }
    }
}
