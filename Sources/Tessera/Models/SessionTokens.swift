/// A session's credentials as the app's backend obtained them, for ``TesseraClient/Sessions/update(tokens:)``.
public struct SessionTokens: Sendable, Hashable {
    /// The opaque session token (`st_…`).
    public var sessionToken: String
    /// The session JWT, when known; a fresh one is fetched either way.
    public var sessionJWT: String?

    /// Creates a pair of session credentials.
    /// - Parameters:
    ///   - sessionToken: The opaque session token.
    ///   - sessionJWT: The session JWT, if the backend has one.
    public init(sessionToken: String, sessionJWT: String? = nil) {
        self.sessionToken = sessionToken
        self.sessionJWT = sessionJWT
    }
}
