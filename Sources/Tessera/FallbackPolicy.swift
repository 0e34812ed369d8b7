/// What the SDK does when a verified session ends and cannot be re-established, or when the user the
/// app knows cannot be signed in at start (``IdentityTokenProvider/identityTokenAtStart()``).
public enum FallbackPolicy: String, Sendable, Hashable {
    /// Start a fresh anonymous identity (never the one merged into the signed-in user). The default.
    case anonymous
    /// Stay without a session until the app calls `identify`, `refreshSession()` or `signOut()`.
    case none
}
