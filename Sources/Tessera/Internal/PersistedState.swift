import Foundation
import TesseraTokens

/// Everything the SDK keeps between launches, sealed by the credential store as one value.
struct PersistedState: Codable, Sendable, Equatable {
    static let currentVersion = 1

    var version = Self.currentVersion
    /// The installation's public ID (a UUID, sent lower-case).
    var installationID: UUID
    /// The installation's secret: proves this installation owns its anonymous identity.
    var installationSecret: String
    /// True once an anonymous session of this installation was identified (merged or promoted):
    /// it is never used for an anonymous session again.
    var installationConsumed = false
    /// The current session, if any.
    var session: StoredSession?
    /// The push token registration, kept with the session credential that registered it.
    var device: StoredDevice?
    /// Sessions signed out while offline: revoked (and their device unregistered) when the network returns.
    var pendingRevocations: [PendingRevocation] = []
    /// Why there is no session, when there is none.
    var lastEndReason: UnavailableReason?
    /// The ``InstallationMarker`` ID of the app installation that wrote this state (nil: written by an
    /// SDK without markers, or by a store without one).
    var installMarker: String?

    static func freshInstallation() -> PersistedState {
        PersistedState(installationID: UUID(), installationSecret: OpaqueToken.installationSecret())
    }

    mutating func rotateInstallation() {
        installationID = UUID()
        installationSecret = OpaqueToken.installationSecret()
        installationConsumed = false
    }
}

struct StoredSession: Codable, Sendable, Equatable {
    var session: Session
    var profile: Profile
    var capabilities: Capabilities
    var token: String
    var jwt: String
    var jwtExpiresAt: Date
    /// When the server last confirmed the session, in local time.
    var lastValidatedAt: Date
    /// Server time minus local time at the last answer, in seconds.
    var serverTimeOffset: TimeInterval
}

struct StoredDevice: Codable, Sendable, Equatable {
    var device: Device
    var pushToken: String
    /// The session token of the session that registered the push token: it can unregister it even
    /// after the local session was cleared.
    var sessionToken: String
}

struct PendingRevocation: Codable, Sendable, Equatable {
    var sessionToken: String
    var deviceID: String? = nil
}
