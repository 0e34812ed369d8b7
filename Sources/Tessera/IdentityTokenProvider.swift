/// Supplies fresh signed identity tokens, minted by the app's backend, when the SDK must establish
/// or re-establish a verified session on its own (for example after the identified session expired
/// or was revoked).
///
/// Return nil when there is no signed-in user any more; throw when the backend cannot be reached.
/// Either way the SDK falls back as ``FallbackPolicy`` says and publishes
/// ``TesseraEvent/authenticationFailed(_:)``.
public protocol IdentityTokenProvider: Sendable {
    /// Returns a fresh identity token for the user the SDK was signed in as, or nil.
    /// - Parameter request: Which user, and why a token is needed.
    func identityToken(for request: IdentityTokenRequest) async throws -> String?
}

/// Why the SDK asks an ``IdentityTokenProvider`` for a token.
public struct IdentityTokenRequest: Sendable, Hashable {
    /// The external user ID of the verified session that ended.
    public var externalUserID: String?
    /// Why the previous session ended.
    public var reason: UnavailableReason

    /// Creates a request.
    /// - Parameters:
    ///   - externalUserID: The user the SDK was signed in as.
    ///   - reason: Why the previous session ended.
    public init(externalUserID: String?, reason: UnavailableReason) {
        self.externalUserID = externalUserID
        self.reason = reason
    }
}

/// A provider backed by a closure.
public struct ClosureIdentityTokenProvider: IdentityTokenProvider {
    private let body: @Sendable (IdentityTokenRequest) async throws -> String?

    /// Creates a provider from a closure.
    /// - Parameter body: Returns a fresh identity token, or nil.
    public init(_ body: @escaping @Sendable (IdentityTokenRequest) async throws -> String?) {
        self.body = body
    }

    public func identityToken(for request: IdentityTokenRequest) async throws -> String? {
        try await body(request)
    }
}
