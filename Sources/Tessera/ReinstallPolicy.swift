/// What the SDK does when it finds the state of a previous installation of the app: the iOS keychain
/// survives the app's deletion, so a reinstalled app can find the session of the person who deleted it.
public enum ReinstallPolicy: Sendable, Hashable {
    /// Revoke the previous installation's session and push token on the server (queued and retried
    /// while offline) and start a fresh anonymous identity. The default.
    case startFresh
    /// Keep the previous installation's identity and session.
    case restore
}
