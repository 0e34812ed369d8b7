/// The client a session was last used from: its address (as the rate limiter keys it) and its
/// `User-Agent`, shown on the profile page's sessions.
public struct SessionClient: Sendable, Hashable {
    /// The client address, `203.0.113.7` or `unknown`.
    public var address: String
    /// The `User-Agent` header, at most ``maxUserAgentBytes`` bytes of it; nil when absent.
    public var userAgent: String?

    /// The most bytes of a user agent kept.
    public static let maxUserAgentBytes = 256

    public init(address: String, userAgent: String?) {
        self.address = address
        self.userAgent = userAgent.map(Self.truncated)
    }

    /// `text` cut to at most ``maxUserAgentBytes`` bytes of UTF-8, at a character's end.
    static func truncated(_ text: String) -> String {
        guard text.utf8.count > maxUserAgentBytes else { return text }
        var result = ""
        for character in text {
            guard result.utf8.count + character.utf8.count <= maxUserAgentBytes else { break }
            result.append(character)
        }
        return result
    }
}
