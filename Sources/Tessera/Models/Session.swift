public import Foundation

/// A session of the current profile on the Tessera server.
public struct Session: Sendable, Hashable, Codable, Identifiable {
    /// The session ID (`ses_…`).
    public var id: String
    /// The profile the session belongs to (`usr_…`).
    public var profileID: String
    /// The installation that opened the session, when one did.
    public var installationID: String?
    /// When the session was created.
    public var createdAt: Date
    /// When the session was last established or extended.
    public var lastAuthenticatedAt: Date
    /// When the session ends unless it is extended, in server time.
    public var expiresAt: Date
    /// The device key the session is bound to, or nil when it is a bearer session (binding off).
    public var binding: SessionBinding?

    /// Creates a session value.
    /// - Parameters:
    ///   - id: The session ID.
    ///   - profileID: The profile ID.
    ///   - installationID: The installation, or nil.
    ///   - createdAt: Creation time.
    ///   - lastAuthenticatedAt: Last authentication time.
    ///   - expiresAt: Expiry, in server time.
    ///   - binding: The device key it is bound to, or nil.
    public init(
        id: String, profileID: String, installationID: String? = nil, createdAt: Date, lastAuthenticatedAt: Date,
        expiresAt: Date, binding: SessionBinding? = nil
    ) {
        self.id = id
        self.profileID = profileID
        self.installationID = installationID
        self.createdAt = createdAt
        self.lastAuthenticatedAt = lastAuthenticatedAt
        self.expiresAt = expiresAt
        self.binding = binding
    }

    enum CodingKeys: String, CodingKey {
        case id
        case profileID = "profile_id"
        case installationID = "installation_id"
        case createdAt = "created_at"
        case lastAuthenticatedAt = "last_authenticated_at"
        case expiresAt = "expires_at"
        case binding
    }
}
