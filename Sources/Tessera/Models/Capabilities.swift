/// What the current session is allowed to claim about its user.
public struct Capabilities: Sendable, Hashable, Codable {
    /// How the session was established; open to kinds a newer server may add.
    /// Encoded as its raw string (the standard library's coding of a `RawRepresentable` string).
    public struct Kind: RawRepresentable, Sendable, Hashable, Codable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The installation's anonymous identity.
        public static let anonymous = Kind(rawValue: "anonymous")
        /// Established by a signed identity token.
        public static let verified = Kind(rawValue: "verified")
        /// Established by a client-asserted user ID: never authenticated.
        public static let unverified = Kind(rawValue: "unverified")
    }

    /// True only for a session established by a signed identity token.
    public var authenticated: Bool
    /// Anonymous, verified or unverified.
    public var kind: Kind

    /// Creates a capabilities value.
    /// - Parameters:
    ///   - authenticated: Whether a signed identity token established the session.
    ///   - kind: The session kind.
    public init(authenticated: Bool, kind: Kind) {
        self.authenticated = authenticated
        self.kind = kind
    }
}
