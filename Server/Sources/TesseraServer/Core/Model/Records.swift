/// A stored project.
public struct ProjectRecord: Sendable, Hashable {
    public var id: String
    public var name: String
    public var slug: String
    public var settings: ProjectSettings
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(id: String, name: String, slug: String, settings: ProjectSettings, createdAt: Int64, updatedAt: Int64) {
        self.id = id
        self.name = name
        self.slug = slug
        self.settings = settings
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// What a store needs to create a project: its record, the hashes of its keys and its first secrets.
public struct NewProject: Sendable {
    public var record: ProjectRecord
    public var publishableKeyHash: [UInt8]
    public var secretKeyHash: [UInt8]
    public var identitySecret: IdentitySecretRecord
    public var sessionKey: SessionKeyRecord

    public init(
        record: ProjectRecord, publishableKeyHash: [UInt8], secretKeyHash: [UInt8],
        identitySecret: IdentitySecretRecord, sessionKey: SessionKeyRecord
    ) {
        self.record = record
        self.publishableKeyHash = publishableKeyHash
        self.secretKeyHash = secretKeyHash
        self.identitySecret = identitySecret
        self.sessionKey = sessionKey
    }
}

/// An identity secret of a project (stored as is: HMAC verification needs the key itself).
public struct IdentitySecretRecord: Sendable, Hashable {
    public var kid: String
    public var value: String
    public var createdAt: Int64
    /// When identify last verified a token with it (recorded at most about once a minute), or nil.
    public var lastUsedAt: Int64?

    public init(kid: String, value: String, createdAt: Int64, lastUsedAt: Int64? = nil) {
        self.kid = kid
        self.value = value
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// A session-JWT signing key of a project; retired keys still verify until their JWTs expire.
public struct SessionKeyRecord: Sendable, Hashable {
    public var kid: String
    public var privateKey: [UInt8]
    public var createdAt: Int64
    public var retiredAt: Int64?

    public init(kid: String, privateKey: [UInt8], createdAt: Int64, retiredAt: Int64? = nil) {
        self.kid = kid
        self.privateKey = privateKey
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }
}

/// A profile: anonymous, or identified by an external user ID.
public struct ProfileRecord: Sendable, Hashable {
    public enum Kind: String, Sendable {
        case anonymous, identified
    }

    public var id: String
    public var projectID: String
    public var kind: Kind
    public var externalID: String?
    public var verified: Bool
    public var name: String?
    public var avatarURL: String?
    public var email: String?
    public var createdAt: Int64
    public var updatedAt: Int64
    /// When an admin blocked the profile; nil when it is not blocked.
    public var blockedAt: Int64?

    /// Whether identify and anonymous restore refuse the profile (`profile_blocked`).
    public var blocked: Bool { blockedAt != nil }

    public init(
        id: String, projectID: String, kind: Kind, externalID: String?, verified: Bool, name: String? = nil,
        avatarURL: String? = nil, email: String? = nil, createdAt: Int64, updatedAt: Int64, blockedAt: Int64? = nil
    ) {
        self.blockedAt = blockedAt
        self.id = id
        self.projectID = projectID
        self.kind = kind
        self.externalID = externalID
        self.verified = verified
        self.name = name
        self.avatarURL = avatarURL
        self.email = email
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A session of a profile.
public struct SessionRecord: Sendable, Hashable {
    /// How the session was established; it decides the capabilities.
    public enum Kind: String, Sendable {
        case anonymous, verified, unverified
    }

    public var id: String
    public var projectID: String
    public var profileID: String
    public var installationID: String?
    public var kind: Kind
    public var createdAt: Int64
    public var lastAuthenticatedAt: Int64
    public var expiresAt: Int64
    public var revokedAt: Int64?
    /// The RFC 7638 thumbprint of the device key the session is bound to (`cnf.jkt`); nil when it
    /// is not bound. Every request presenting a bound session carries a DPoP proof of that key.
    public var jkt: String?
    /// Where the device says the bound key lives (declared by the client, not proven); nil when
    /// the session is not bound or the client did not say.
    public var keyTier: KeyTier?
    /// The client that created the session, written with it (then kept by ``SessionClientRecorder``);
    /// not read back with the session.
    public var client: SessionClient? = nil

    /// Where a device keeps the key a session is bound to, as its client declares it.
    public enum KeyTier: String, Sendable, Hashable, CaseIterable {
        /// A key in the Secure Enclave, which the device cannot give away.
        case secureEnclave = "secure_enclave"
        /// A software P-256 key kept in the credential store.
        case software
    }

    public init(
        id: String, projectID: String, profileID: String, installationID: String?, kind: Kind, createdAt: Int64,
        lastAuthenticatedAt: Int64, expiresAt: Int64, revokedAt: Int64? = nil, jkt: String? = nil,
        keyTier: KeyTier? = nil
    ) {
        self.id = id
        self.projectID = projectID
        self.profileID = profileID
        self.installationID = installationID
        self.kind = kind
        self.createdAt = createdAt
        self.lastAuthenticatedAt = lastAuthenticatedAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.jkt = jkt
        self.keyTier = keyTier
    }

    /// Whether the session can be used at `now`.
    public func isAlive(now: Int64) -> Bool { revokedAt == nil && expiresAt > now }
}

/// A session together with its profile: what every authenticated request needs.
public struct SessionContext: Sendable, Hashable {
    public var session: SessionRecord
    public var profile: ProfileRecord

    public init(session: SessionRecord, profile: ProfileRecord) {
        self.session = session
        self.profile = profile
    }
}

/// A push token bound to the session that registered it.
public struct DeviceRecord: Sendable, Hashable {
    public var id: String
    public var projectID: String
    public var sessionID: String
    public var profileID: String
    public var platform: String
    public var environment: String
    public var token: String
    public var createdAt: Int64
    /// The kind of the session it is bound to, when read with it (admin listings: `verified_session`).
    public var sessionKind: SessionRecord.Kind?

    public init(
        id: String, projectID: String, sessionID: String, profileID: String, platform: String, environment: String,
        token: String, createdAt: Int64, sessionKind: SessionRecord.Kind? = nil
    ) {
        self.sessionKind = sessionKind
        self.id = id
        self.projectID = projectID
        self.sessionID = sessionID
        self.profileID = profileID
        self.platform = platform
        self.environment = environment
        self.token = token
        self.createdAt = createdAt
    }
}

/// The two kinds of API key a project has.
public enum APIKeyKind: String, Sendable, CaseIterable {
    case publishable, secret
}

/// The hash of an API key a project accepts: its current key of a kind, or a rotated-out one
/// until its grace period ends.
public struct APIKeyHashRecord: Sendable, Hashable {
    public var kind: APIKeyKind
    public var hash: [UInt8]
    /// Nil for the current key; for a rotated-out key, the second from which it is refused.
    public var expiresAt: Int64?

    public init(kind: APIKeyKind, hash: [UInt8], expiresAt: Int64?) {
        self.kind = kind
        self.hash = hash
        self.expiresAt = expiresAt
    }
}
