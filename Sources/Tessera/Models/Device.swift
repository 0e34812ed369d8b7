public import Foundation

/// A push token registered with the Tessera server, bound to the session that registered it.
public struct Device: Sendable, Hashable, Codable, Identifiable {
    /// The device ID (`dev_…`).
    public var id: String
    /// APNs or FCM.
    public var platform: PushPlatform
    /// Sandbox or production.
    public var environment: PushEnvironment
    /// The session the token is bound to; it goes when that session ends.
    public var sessionID: String
    /// When the token was registered.
    public var createdAt: Date

    /// Creates a device value.
    /// - Parameters:
    ///   - id: The device ID.
    ///   - platform: APNs or FCM.
    ///   - environment: Sandbox or production.
    ///   - sessionID: The session the token is bound to.
    ///   - createdAt: Registration time.
    public init(id: String, platform: PushPlatform, environment: PushEnvironment, sessionID: String, createdAt: Date) {
        self.id = id
        self.platform = platform
        self.environment = environment
        self.sessionID = sessionID
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey {
        case id, platform, environment
        case sessionID = "session_id"
        case createdAt = "created_at"
    }
}
