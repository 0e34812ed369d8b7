/// The authenticated session of a request: its project, the session with its profile, and the
/// session token when the request presented it.
struct Caller: Sendable {
    let runtime: ProjectRuntime
    let context: SessionContext
    /// The session token, when the request presented it (a JWT does not reveal it).
    let sessionToken: String?
}
