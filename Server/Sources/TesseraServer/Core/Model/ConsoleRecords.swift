/// Filters of the profile list (`GET /v1/admin/profiles`, the console's profiles page); every
/// filter optional, newest first unless ``oldestFirst``.
///
/// Profile IDs are time-ordered (``TimeOrderedID``), so "newest first" is `id DESC` and the cursor
/// is simply the last ID of the page before: a page never repeats or skips a profile, whatever was
/// created meanwhile.
public struct ProfileQuery: Sendable, Hashable {
    public var projectID: String
    public var kind: ProfileRecord.Kind?
    public var verified: Bool?
    /// The stored email, compared without regard to case (the database's `lower`: ASCII letters on
    /// SQLite, the database's locale on PostgreSQL).
    public var email: String?
    /// Profiles whose email, name or external ID starts with this text, without regard to case (as
    /// ``email`` compares).
    public var search: String?
    public var externalID: String?
    /// The profile an installation (its UUID) belongs to.
    public var installationID: String?
    public var blocked: Bool?
    /// The cursor, the last ID of the previous page: the profiles whose ID sorts before it (after it
    /// when ``oldestFirst``).
    public var beforeID: String?
    /// Oldest first (ascending IDs) instead of newest first.
    public var oldestFirst = false
    /// Profiles created at or after this second (Unix, UTC), as their ID tells (``createdIDRange``).
    public var createdFrom: Int64?
    /// Profiles created before this second (Unix, UTC), as their ID tells (``createdIDRange``).
    public var createdUntil: Int64?
    public var limit: Int

    /// A query of `projectID`'s profiles, without filters unless given.
    ///
    /// - Parameters:
    ///   - projectID: the project listed.
    ///   - limit: the most profiles answered.
    public init(
        projectID: String, kind: ProfileRecord.Kind? = nil, verified: Bool? = nil, email: String? = nil,
        externalID: String? = nil, installationID: String? = nil, blocked: Bool? = nil, beforeID: String? = nil,
        limit: Int
    ) {
        self.projectID = projectID
        self.kind = kind
        self.verified = verified
        self.email = email
        self.externalID = externalID
        self.installationID = installationID
        self.blocked = blocked
        self.beforeID = beforeID
        self.limit = limit
    }

    /// The profile IDs of ``createdFrom`` and ``createdUntil``: profile IDs are time-ordered
    /// (``TimeOrderedID``: `usr_`, the creation time in milliseconds as 12 hexadecimal digits, then
    /// random characters), so the profiles created in a range are the IDs from `low` (included) to
    /// `high` (excluded), one range of every index keyed by ID. Nil for an open end.
    public var createdIDRange: (low: String?, high: String?) {
        (createdFrom.map(Self.firstID(at:)), createdUntil.map(Self.firstID(at:)))
    }

    /// The lowest profile ID of a profile created at `seconds`: `usr_` and the time's 12 hexadecimal
    /// digits of milliseconds, which every such ID starts with.
    static func firstID(at seconds: Int64) -> String {
        let milliseconds = UInt64(clamping: max(0, seconds)).multipliedReportingOverflow(by: 1000)
        let value = milliseconds.overflow ? UInt64(0xffff_ffff_ffff) : min(milliseconds.partialValue, 0xffff_ffff_ffff)
        let digits = String(value, radix: 16)
        return "usr_" + String(repeating: "0", count: 12 - digits.count) + digits
    }
}

/// A profile folded into another one (by identify's `merged` outcome), which now resolves to it.
public struct ProfileAliasRecord: Sendable, Hashable {
    /// The profile folded in (`usr_…`); its own row is gone, the ID resolves to ``profileID``.
    public var aliasID: String
    /// The profile it now resolves to.
    public var profileID: String
    /// When it was merged (into this profile, or into a profile later merged into this one).
    public var createdAt: Int64
    /// How it became an alias: `merged` (the only way the server makes aliases today).
    public var how: String

    public init(aliasID: String, profileID: String, createdAt: Int64, how: String = "merged") {
        self.aliasID = aliasID
        self.profileID = profileID
        self.createdAt = createdAt
        self.how = how
    }
}

/// The counts of the console's overview, read from indexes (no full table scan).
public struct ProjectCounts: Sendable, Hashable {
    /// Every profile of the project.
    public var profiles: Int
    public var anonymousProfiles: Int
    public var identifiedProfiles: Int
    public var blockedProfiles: Int
    /// Sessions not revoked and not expired at the time asked.
    public var liveSessions: Int

    public init(
        profiles: Int, anonymousProfiles: Int, identifiedProfiles: Int, blockedProfiles: Int, liveSessions: Int
    ) {
        self.profiles = profiles
        self.anonymousProfiles = anonymousProfiles
        self.identifiedProfiles = identifiedProfiles
        self.blockedProfiles = blockedProfiles
        self.liveSessions = liveSessions
    }
}

/// How the profile list compares emails and searches: ASCII letters without regard to case, the
/// same on both backends (SQLite's `lower` folds ASCII only; PostgreSQL folds with `translate`, so
/// its locale never makes the two answer differently).
enum ProfileSearch {
    /// The columns a search reads, each through its folded index (`profiles_<column>_folded`).
    static let columns = ["email", "name", "external_id"]

    /// A search one of whose column ranges holds this many profiles or more is "dense": its page is
    /// found faster by walking all profiles in ID order and keeping the matches (one profile in
    /// `threshold / project size` or more matches) than by merging ranges that would have to be read
    /// whole to be put in ID order. A dense prefix with another filter that few of its matches pass
    /// walks further; blocked profiles are read from their own index instead.
    static let denseThreshold = 2_000

    /// Whether `query`'s search chooses the index: no installation, external ID, email or blocked
    /// profiles (a small index of their own) to start from.
    static func drives(_ query: ProfileQuery) -> Bool {
        query.search != nil && query.installationID == nil && query.externalID == nil && query.email == nil
            && query.blocked != true
    }

    /// `text` with ASCII capitals made small, as the folded indexes hold the values.
    static func folded(_ text: String) -> String {
        String(decoding: text.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    /// The range of folded values that start with `prefix`: from the folded prefix to it followed by
    /// the last code point, which no stored character follows in the byte order both backends
    /// compare in (binary on SQLite, the "C" collation on PostgreSQL).
    static func range(_ prefix: String) -> (low: String, high: String) {
        let low = folded(prefix)
        return (low, low + "\u{10FFFF}")
    }
}
