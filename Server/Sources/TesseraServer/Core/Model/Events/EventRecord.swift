/// The types of event the outbox records.
public enum EventType: String, Sendable, CaseIterable {
    case profilePromoted = "profile.promoted"
    case profileMerged = "profile.merged"
    case profileErased = "profile.erased"
    case sessionEnded = "session.ended"
    case profileCreated = "profile.created"
    case profileUpdated = "profile.updated"
    case profileBlocked = "profile.blocked"
    case profileUnblocked = "profile.unblocked"
    case sessionCreated = "session.created"
    case deviceRegistered = "device.registered"
    case deviceRemoved = "device.removed"
    case projectUpdated = "project.updated"
    case identitySecretCreated = "identity_secret.created"
    case identitySecretDeleted = "identity_secret.deleted"
    case apiKeyRotated = "api_key.rotated"
    case signingKeyRotated = "signing_key.rotated"
    case webhookCreated = "webhook.created"
    case webhookUpdated = "webhook.updated"
    case webhookDeleted = "webhook.deleted"
    case profileNewKey = "profile.new_key"
}

/// Why a session ended (`session.ended`'s `reason`).
public enum SessionEndReason: String, Sendable, CaseIterable {
    /// Ended by another session of its profile (`DELETE /v1/sessions/{id}`,
    /// `POST /v1/sessions/revoke-others`).
    case revoked
    /// Ended by itself (`POST /v1/sessions/revoke`).
    case signedOut = "signed_out"
    /// Removed by the cleanup service after it expired.
    case expired
    /// Ended by identify: the caller's session, and every other session of a promoted or folded profile.
    case replaced
    /// Its profile was erased.
    case erased
    /// Its profile was blocked.
    case blocked
    /// Ended through the admin API.
    case admin
    /// Ended to make room for a new session of its profile (`max_sessions_per_profile`).
    case evicted
}

/// A recorded event, as the feed returns it.
public struct EventRecord: Sendable, Hashable {
    public var id: String
    public var projectID: String
    /// Per project, strictly increasing, without gaps among committed events.
    public var sequence: Int64
    public var type: String
    public var createdAt: Int64
    public var actor: EventActor
    /// The client address of the change (for audit; not in the feed).
    public var clientAddress: String?
    /// The profile the event is about, when there is one (the feed's `profile_id` filter).
    public var profileID: String?
    /// The event's `data`: a JSON object, as stored.
    public var data: String
    /// The operator's reason for the change (for audit; not in the feed), or nil.
    public var reason: String?

    public init(
        id: String, projectID: String, sequence: Int64, type: String, createdAt: Int64, actor: EventActor,
        clientAddress: String?, profileID: String?, data: String, reason: String? = nil
    ) {
        self.reason = reason
        self.id = id
        self.projectID = projectID
        self.sequence = sequence
        self.type = type
        self.createdAt = createdAt
        self.actor = actor
        self.clientAddress = clientAddress
        self.profileID = profileID
        self.data = data
    }
}

/// A read of the feed: the events of a project after a sequence, optionally of some types or of one
/// profile, in sequence order.
public struct EventQuery: Sendable, Hashable {
    public var projectID: String
    public var after: Int64
    /// Only these types (all when empty).
    public var types: [String]
    public var profileID: String?
    public var limit: Int

    public init(projectID: String, after: Int64, types: [String] = [], profileID: String? = nil, limit: Int) {
        self.projectID = projectID
        self.after = after
        self.types = types
        self.profileID = profileID
        self.limit = limit
    }
}
