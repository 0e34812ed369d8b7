/// Filters of the profile list (`GET /v1/admin/profiles`, the console's profiles page); every
/// filter optional, newest first.
///
/// Profile IDs are time-ordered (``TimeOrderedID``), so "newest first" is `id DESC` and the cursor
/// is simply the last ID of the page before: a page never repeats or skips a profile, whatever was
/// created meanwhile.
public struct ProfileQuery: Sendable, Hashable {
    public var projectID: String
    public var kind: ProfileRecord.Kind?
    public var verified: Bool?
    /// Exact match on the stored email.
    public var email: String?
    public var externalID: String?
    /// The profile an installation (its UUID) belongs to.
    public var installationID: String?
    public var blocked: Bool?
    /// Profiles whose id sorts before this one (the cursor: the last id of the previous page).
    public var beforeID: String?
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
