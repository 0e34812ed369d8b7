/// Things that happened, as opposed to states: delivered to the observers present at the time.
public enum TesseraEvent: Sendable, Hashable {
    /// An identify succeeded.
    case identified(Profile, capabilities: Capabilities, merge: Merge?)
    /// A verified session could not be (re-)established; the SDK fell back as the fallback policy says.
    case authenticationFailed(TesseraError)
    /// A fresh anonymous session was refused for a reason retrying soon will not fix: a wrong or deleted
    /// publishable key (`invalid_api_key`), a 403 or a 400. The SDK then tries again only once per
    /// heartbeat interval; `attempts` counts the failed attempts in a row, across those retries.
    case anonymousSessionFailed(TesseraError, attempts: Int)
    /// The session ended on the server (expired, revoked, unknown).
    case sessionEnded(UnavailableReason)
    /// The stored state could not be decrypted or decoded, twice; it was moved aside (quarantined, not
    /// deleted) and a fresh identity started.
    case storageCorrupted
    /// The state of a previous installation of the app was found (the keychain survives the app's
    /// deletion); ``TesseraConfiguration/reinstallPolicy`` restored it or started fresh.
    case previousInstallationFound(restored: Bool)
    /// The server ended the session its push token was bound to, and the token could not be bound to
    /// the session that replaced it: register it again (``TesseraClient/registeredDevice`` is nil).
    case deviceRegistrationLost(pushToken: String)
    /// The sign-out pipeline finished.
    case signedOut
    /// `reset()` replaced the installation identity.
    case reset
}
