/// What a request authenticated as; ``Authenticator`` sets it in the request context before the
/// handler runs, and handlers read it from there.
enum Authentication: Sendable {
    /// Nothing yet, or an endpoint that takes no credential.
    case none
    /// An API key (publishable or secret, as the endpoint required): its project.
    case project(ProjectRuntime)
    /// A session token or session JWT: its live session.
    case session(Caller)
}
