import TesseraTokens

/// A console session: what the console's cookie stands for.
///
/// Only the SHA-256 of the cookie's token is stored. A session ends at ``expiresAt`` (absolute) or
/// ``idleSeconds`` after ``lastSeenAt``, whichever comes first; the store answers neither.
public struct OperatorSessionRecord: Sendable, Hashable {
    /// How long a session lives without being used: 12 hours.
    public static let idleSeconds: Int64 = 43_200
    /// How long a session lives at most: 7 days.
    public static let absoluteSeconds: Int64 = 604_800

    /// `ops_…`, time ordered.
    public var id: String
    public var operatorID: String
    /// SHA-256 of the cookie's token.
    public var tokenHash: [UInt8]
    /// The token every form of the session carries (32 random bytes, base64url); compare it with
    /// ``matchesCSRF(_:)``, in constant time.
    public var csrfToken: String
    public var createdAt: Int64
    public var lastSeenAt: Int64
    /// `createdAt` + ``absoluteSeconds``.
    public var expiresAt: Int64

    public init(
        id: String, operatorID: String, tokenHash: [UInt8], csrfToken: String, createdAt: Int64, lastSeenAt: Int64,
        expiresAt: Int64
    ) {
        self.id = id
        self.operatorID = operatorID
        self.tokenHash = tokenHash
        self.csrfToken = csrfToken
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.expiresAt = expiresAt
    }

    /// Whether the session is alive at `now`: before its absolute end and not idle too long.
    public func isAlive(at now: Int64) -> Bool {
        now < expiresAt && now < lastSeenAt + Self.idleSeconds
    }

    /// Whether a form's `csrf` value is this session's token, compared in constant time.
    public func matchesCSRF(_ candidate: String) -> Bool {
        OpaqueToken.constantTimeEquals(Array(candidate.utf8), Array(csrfToken.utf8))
    }
}
