/// A session a start, an identify or an extension answers with: what the session envelope states.
struct SessionGrant: Sendable {
    /// The session and its profile, as written.
    var context: SessionContext
    /// The session token, when the answer may carry it (a new session, or the one presented).
    var token: String?
    /// The request's clock reading, in Unix seconds: the envelope's `server_time`.
    var now: Int64
    /// Whether a requested session length was above the project's maximum; nil when none was asked.
    var extensionCapped: Bool?
    /// True when an anonymous start created its installation (`201`).
    var createdInstallation = false
    /// Identify's `merge` member (`.some(nil)`: identify answered no merge); nil for other answers.
    var merge: (outcome: MergeOutcome, fromProfileID: String)?? = nil
}
