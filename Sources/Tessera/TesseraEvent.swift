/// Things that happened, as opposed to states: delivered to the observers present at the time.
public enum TesseraEvent: Sendable, Hashable {
    /// An identify succeeded.
    case identified(Profile, capabilities: Capabilities, merge: Merge?)
    /// A verified session could not be (re-)established; the SDK fell back as the fallback policy says.
    case authenticationFailed(TesseraError)
    /// The session ended on the server (expired, revoked, unknown).
    case sessionEnded(UnavailableReason)
    /// The stored state could not be decrypted or decoded, twice; it was moved aside (quarantined, not
    /// deleted) and a fresh identity started.
    case storageCorrupted
    /// The state of a previous installation of the app was found (the keychain survives the app's
    /// deletion); ``TesseraConfiguration/reinstallPolicy`` restored it or started fresh.
    case previousInstallationFound(restored: Bool)
    /// The sign-out pipeline finished.
    case signedOut
    /// `reset()` replaced the installation identity.
    case reset
}
