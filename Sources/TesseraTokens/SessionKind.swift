/// The kind of session a session JWT was issued for: its `kind` claim.
///
/// Open, so a kind added by a later server does not break a verifier; compare with the constants.
public struct SessionKind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String

    /// Creates a kind from its claim value.
    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    /// A session of an app installation that nobody has signed in to.
    public static let anonymous = SessionKind(rawValue: "anonymous")
    /// A session established by a signed identity token: its `external_id` was proven by the app's backend.
    public static let verified = SessionKind(rawValue: "verified")
    /// A session established by a client-asserted user ID: anyone holding the publishable key can
    /// assert any `external_id`, so it proves nothing about who the user is.
    public static let unverified = SessionKind(rawValue: "unverified")

    /// Whether `claim` is this kind, compared byte for byte.
    func matches(_ claim: String) -> Bool { rawValue.utf8.elementsEqual(claim.utf8) }
}
