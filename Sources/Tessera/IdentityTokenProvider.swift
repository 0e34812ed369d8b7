/// Supplies fresh signed identity tokens, minted by the app's backend, when the SDK must establish
/// or re-establish a verified session on its own (for example after the identified session expired
/// or was revoked, or at ``TesseraClient/start()`` for a user the app already knows).
///
/// Return nil when there is no signed-in user any more; throw when the backend cannot be reached.
/// Either way the SDK falls back as ``FallbackPolicy`` says and publishes
/// ``TesseraEvent/authenticationFailed(_:)``. The SDK waits at most
/// ``TesseraConfiguration/identityTokenTimeout`` for an answer. Set it in the configuration, or at
/// runtime with ``TesseraClient/setIdentityTokenProvider(_:)``.
public protocol IdentityTokenProvider: Sendable {
    /// Returns a fresh identity token for the user the SDK was signed in as, or nil.
    /// - Parameter request: Which user, and why a token is needed.
    func identityToken(for request: IdentityTokenRequest) async throws -> String?

    /// Returns an identity token for the user the app already knows is signed in, or nil (the default).
    ///
    /// ``TesseraClient/start()`` asks when it holds no identified session: an app that adopts Tessera with
    /// users already signed in to its own backend, or that kept its backend session across a reinstall,
    /// returns a token and the user is signed in at start (the anonymous profile merged into theirs).
    func identityTokenAtStart() async throws -> String?
}

extension IdentityTokenProvider {
    /// Nobody is known at start: the SDK starts anonymous.
    public func identityTokenAtStart() async throws -> String? { nil }
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

/// A provider backed by closures.
public struct ClosureIdentityTokenProvider: IdentityTokenProvider {
    private let body: @Sendable (IdentityTokenRequest) async throws -> String?
    private let atStart: @Sendable () async throws -> String?

    /// Creates a provider from closures.
    /// - Parameters:
    ///   - atStart: Returns a token for the user the app knows at start, or nil (the default: nobody).
    ///   - body: Returns a fresh identity token, or nil.
    public init(
        atStart: @escaping @Sendable () async throws -> String? = { nil },
        _ body: @escaping @Sendable (IdentityTokenRequest) async throws -> String?
    ) {
        self.body = body
        self.atStart = atStart
    }

    public func identityToken(for request: IdentityTokenRequest) async throws -> String? {
        try await body(request)
    }

    public func identityTokenAtStart() async throws -> String? {
        try await atStart()
    }
}
