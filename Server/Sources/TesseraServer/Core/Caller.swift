/// The authenticated session of a request: its project, the session with its profile, and the
/// session token when the request presented it.
///
/// A reference, so that the request context that carries it through the middleware stays small.
final class Caller: Sendable {
    let runtime: ProjectRuntime
    let context: SessionContext
    /// The session token, when the request presented it (a JWT does not reveal it).
    let sessionToken: String?

    init(runtime: ProjectRuntime, context: SessionContext, sessionToken: String?) {
        self.runtime = runtime
        self.context = context
        self.sessionToken = sessionToken
    }
}
