/// Starts (or restores) the anonymous identity of an installation and opens a session for it.
public struct AnonymousStart: Sendable {
    public var projectID: String
    public var installationID: String
    public var installationSecretHash: [UInt8]
    /// The profile to create when the installation has none.
    public var newProfileID: String
    public var newSession: SessionRecord
    public var sessionTokenHash: [UInt8]
    /// The start's own hit on the client address's counter, counted in the same transaction; a
    /// start that would exceed the limit is refused (`rate_limited`) and changes nothing.
    public var rateLimit: RateLimitCharge?
    /// Who started it (recorded with its events).
    public var origin: EventOrigin
    /// The project's `max_sessions_per_profile`: live sessions of the profile beyond it, counting the
    /// new one, end (`evicted`) in the same transaction, least recently authenticated first.
    public var maxSessionsPerProfile: Int64? = nil
    /// The App Attest gate let this start through as a restore, with evidence a new installation
    /// would not pass: when the installation is gone by the start's transaction (a cleanup deleted
    /// it meanwhile), the start is refused (`attestation_required`) and creates nothing.
    public var refusesNewInstallation = false

    public init(
        projectID: String, installationID: String, installationSecretHash: [UInt8], newProfileID: String,
        newSession: SessionRecord, sessionTokenHash: [UInt8], rateLimit: RateLimitCharge? = nil,
        origin: EventOrigin = EventOrigin(actor: .sdk(sessionID: nil), clientAddress: nil)
    ) {
        self.rateLimit = rateLimit
        self.origin = origin
        self.projectID = projectID
        self.installationID = installationID
        self.installationSecretHash = installationSecretHash
        self.newProfileID = newProfileID
        self.newSession = newSession
        self.sessionTokenHash = sessionTokenHash
    }
}

/// The answer of ``TesseraStore/startAnonymousSession(_:)``.
public struct AnonymousStartResult: Sendable {
    /// True when the installation was new.
    public var createdInstallation: Bool
    public var context: SessionContext
    /// The client address's hits in the current window, this start included (with ``AnonymousStart/rateLimit``).
    public var rateLimitHits: Int64? = nil
}

/// One identify: the verified (or asserted) user, the caller, and the session to open.
public struct IdentifyCommand: Sendable {
    public var projectID: String
    /// The session that called identify, if any; it is ended.
    public var callerSessionID: String?
    public var externalID: String
    public var verified: Bool
    public var name: String?
    public var avatarURL: String?
    public var email: String?
    /// The identity token's `jti` and when it expires: recorded as used, once.
    public var tokenID: (value: String, expiresAt: Int64)?
    /// The profile ID to use when a new profile is created.
    public var newProfileID: String
    /// The session to open; its `profileID` and `installationID` are filled in by the store.
    public var newSession: SessionRecord
    public var sessionTokenHash: [UInt8]
    public var now: Int64
    /// The identity secret whose `last_used_at` this identify records (set at most about once a
    /// minute per secret, see ``IdentitySecretUsage``), or nil.
    public var recordSecretUse: String? = nil
    /// Who identified (recorded with its events).
    public var origin: EventOrigin
    /// The project's `max_sessions_per_profile` (see ``AnonymousStart/maxSessionsPerProfile``).
    public var maxSessionsPerProfile: Int64? = nil

    public init(
        projectID: String, callerSessionID: String?, externalID: String, verified: Bool, name: String?,
        avatarURL: String?, email: String?, tokenID: (value: String, expiresAt: Int64)?, newProfileID: String,
        newSession: SessionRecord, sessionTokenHash: [UInt8], now: Int64,
        origin: EventOrigin? = nil
    ) {
        self.origin = origin ?? EventOrigin(actor: .sdk(sessionID: callerSessionID), clientAddress: nil)
        self.projectID = projectID
        self.callerSessionID = callerSessionID
        self.externalID = externalID
        self.verified = verified
        self.name = name
        self.avatarURL = avatarURL
        self.email = email
        self.tokenID = tokenID
        self.newProfileID = newProfileID
        self.newSession = newSession
        self.sessionTokenHash = sessionTokenHash
        self.now = now
    }
}

/// How identify treated the caller's profile.
public enum MergeOutcome: String, Sendable {
    case promoted, merged, unchanged
}

/// The answer of ``TesseraStore/identify(_:)``.
public struct IdentifyResult: Sendable {
    public var context: SessionContext
    /// Present when identify was called with a session.
    public var merge: (outcome: MergeOutcome, fromProfileID: String)?
    /// True when a new profile was created (no caller, no existing profile).
    public var createdProfile: Bool
}

/// What one cleanup pass deleted.
public struct CleanupCounts: Sendable, Hashable {
    public var sessions = 0
    public var devices = 0
    public var tokenIDs = 0
    /// Rate-limit counters of windows that ended.
    public var rateLimitWindows = 0
    /// Anonymous profiles past the retention age without a live session.
    public var anonymousProfiles = 0
    /// Console sessions past their absolute or idle end.
    public var operatorSessions = 0
    /// Operator enrollment links past their 15 minutes.
    public var operatorEnrollments = 0
    /// DPoP proof IDs past their proof's window.
    public var dpopProofs = 0
    /// App Attest challenges past their five minutes, used or not.
    public var appAttestChallenges = 0
    public init() {}
    public var total: Int {
        sessions + devices + tokenIDs + rateLimitWindows + anonymousProfiles + operatorSessions + operatorEnrollments
            + dpopProofs + appAttestChallenges
    }
}
