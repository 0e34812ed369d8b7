import Foundation

@testable import Tessera

/// Values of the SDK's internal state, for the unit tests of its internal types.
enum Fixtures {
    static let epoch = Date(timeIntervalSince1970: 1_800_000_000)

    /// A stored session of token `token`, of the given kind, validated at `validatedAt`.
    static func session(
        _ token: String, kind: Capabilities.Kind = .anonymous, validatedAt: Date = epoch
    ) -> StoredSession {
        StoredSession(
            session: Session(
                id: "ses_\(token)", profileID: "prf_\(token)", createdAt: epoch, lastAuthenticatedAt: epoch,
                expiresAt: epoch.addingTimeInterval(3600)),
            profile: Profile(
                id: "prf_\(token)", kind: kind == .anonymous ? .anonymous : .identified, createdAt: epoch,
                updatedAt: epoch),
            capabilities: Capabilities(authenticated: kind == .verified, kind: kind),
            token: token, jwt: "jwt_\(token)", jwtExpiresAt: epoch.addingTimeInterval(300),
            lastValidatedAt: validatedAt, serverTimeOffset: 0)
    }

    /// A push token registration `id`, registered by the session of token `sessionToken`.
    static func device(_ id: String, registeredBy sessionToken: String) -> StoredDevice {
        StoredDevice(
            device: Tessera.Device(
                id: id, platform: .apns, environment: .sandbox, sessionID: "ses_\(sessionToken)", createdAt: epoch),
            pushToken: "push_\(id)", sessionToken: sessionToken)
    }

    /// A loaded state with the given session, push token and queue.
    static func state(
        session: StoredSession? = nil, device: StoredDevice? = nil, queued: [PendingRevocation] = []
    ) -> PersistedState {
        var state = PersistedState.freshInstallation()
        state.session = session
        state.device = device
        state.pendingRevocations = queued
        return state
    }

    /// A configuration whose random numbers are always `random` (0.5: no jitter).
    static func configuration(random: Double = 0.5) -> TesseraConfiguration {
        TesseraConfiguration(
            serverURL: URL(string: "https://id.example.com")!, publishableKey: "pk_test", random: { random })
    }
}
