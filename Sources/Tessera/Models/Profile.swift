public import Foundation

/// The profile the current session belongs to: anonymous (one per installation) or identified.
public struct Profile: Sendable, Hashable, Codable, Identifiable {
    /// Whether a profile is anonymous or identified; open to kinds a newer server may add.
    /// Encoded as its raw string (the standard library's coding of a `RawRepresentable` string).
    public struct Kind: RawRepresentable, Sendable, Hashable, Codable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The anonymous profile of one installation.
        public static let anonymous = Kind(rawValue: "anonymous")
        /// A profile with an external user ID.
        public static let identified = Kind(rawValue: "identified")
    }

    /// The profile ID (`usr_…`).
    public var id: String
    /// Anonymous or identified.
    public var kind: Kind
    /// The app's user ID (`sub` of the identity token, or the client-asserted user ID).
    public var externalID: String?
    /// True only when the profile was established by a signed identity token.
    public var verified: Bool
    /// Display name.
    public var name: String?
    /// Avatar URL.
    public var avatarURL: String?
    /// Email address.
    public var email: String?
    /// When the profile was created.
    public var createdAt: Date
    /// When the profile last changed.
    public var updatedAt: Date

    /// Creates a profile value.
    /// - Parameters:
    ///   - id: The profile ID.
    ///   - kind: Anonymous or identified.
    ///   - externalID: The app's user ID.
    ///   - verified: Whether a signed identity token established it.
    ///   - name: Display name.
    ///   - avatarURL: Avatar URL.
    ///   - email: Email.
    ///   - createdAt: Creation time.
    ///   - updatedAt: Last change.
    public init(
        id: String, kind: Kind, externalID: String? = nil, verified: Bool = false, name: String? = nil,
        avatarURL: String? = nil, email: String? = nil, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.kind = kind
        self.externalID = externalID
        self.verified = verified
        self.name = name
        self.avatarURL = avatarURL
        self.email = email
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case id, kind, verified, name, email
        case externalID = "external_id"
        case avatarURL = "avatar_url"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}
