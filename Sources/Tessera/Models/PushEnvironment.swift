/// The push service environment a device token belongs to.
public enum PushEnvironment: String, Sendable, Hashable, Codable {
    /// APNs sandbox (development builds).
    case sandbox
    /// APNs production (TestFlight and App Store builds).
    case production
}

/// The push service a device token belongs to.
public enum PushPlatform: String, Sendable, Hashable, Codable {
    /// Apple Push Notification service.
    case apns
    /// Firebase Cloud Messaging.
    case fcm
}
