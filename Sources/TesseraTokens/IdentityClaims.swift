public import Foundation

/// The verified claims of an identity token.
public struct IdentityClaims: Sendable, Hashable {
    /// `sub`: the app's stable user ID.
    public var subject: String
    /// `exp`.
    public var expiration: Date
    /// `aud`, as a list; empty when the token has none.
    public var audience: [String]
    /// `iat`.
    public var issuedAt: Date?
    /// `nbf`.
    public var notBefore: Date?
    /// `jti`: when present the token is single-use until it expires.
    public var tokenID: String?
    /// `iss`.
    public var issuer: String?
    /// The display name: `name`, else `display_name`, else `displayName`.
    public var name: String?
    /// The avatar URL: `avatar_url`, else `avatarUrl`, else `picture`.
    public var avatarURL: String?
    /// `email`.
    public var email: String?

    /// Creates claims, typically to mint a token.
    public init(
        subject: String,
        expiration: Date,
        audience: [String] = [],
        issuedAt: Date? = nil,
        notBefore: Date? = nil,
        tokenID: String? = nil,
        issuer: String? = nil,
        name: String? = nil,
        avatarURL: String? = nil,
        email: String? = nil
    ) {
        self.subject = subject
        self.expiration = expiration
        self.audience = audience
        self.issuedAt = issuedAt
        self.notBefore = notBefore
        self.tokenID = tokenID
        self.issuer = issuer
        self.name = name
        self.avatarURL = avatarURL
        self.email = email
    }
}
