import Foundation

extension TesseraClient {
    /// Sets or replaces the identity-token provider at runtime (nil removes it).
    ///
    /// Use it when the provider depends on something the app learns after creating the client, such as its
    /// own backend session. The next re-establishment of a verified session asks the new provider; one
    /// already waiting for the old provider finishes with it.
    /// - Parameter provider: The provider, or nil.
    public func setIdentityTokenProvider(_ provider: (any IdentityTokenProvider)?) {
        identityTokenProvider = provider
    }

    /// The opaque session token of the current session, readable synchronously from any thread; nil when
    /// there is no session (after sign-out, ``clearSession()`` or ``reset()`` too).
    public nonisolated var currentSessionToken: String? { cachedCredentials.withLock { $0?.sessionToken } }

    /// The current session JWT as last received, readable synchronously from any thread; nil when there is
    /// no session. It may be close to expiry: ``authorizationHeader()`` refreshes it first.
    public nonisolated var currentSessionJWT: String? { cachedCredentials.withLock { $0?.sessionJWT } }

    /// At ``start()``, when no identified session is held: asks the provider for the user the app already
    /// knows (``IdentityTokenProvider/identityTokenAtStart()``) and identifies with that token. Nil means
    /// nobody: the anonymous identity goes on. A failure is published as
    /// ``TesseraEvent/authenticationFailed(_:)``; then the fallback policy applies (anonymous, or no session).
    func signInKnownUser(with provider: any IdentityTokenProvider) async {
        let gen = ledger.generation
        let timeout = configuration.identityTokenTimeout
        do {
            let token = try await Deadline.run(
                timeout, clock: clock, timeoutError: { Self.providerTimeout(timeout) },
                { try await provider.identityTokenAtStart() })
            guard let token, ledger.isCurrent(gen) else { return }
            _ = try await performIdentify(.signed(token), generation: ledger.advanceForIdentify())
            log(.info, "signed in the user the app knows at start")
        } catch {
            let error = TesseraError.wrapping(error)
            if error.code == .superseded { return }
            log(.warning, "signing in the known user at start failed: \(error.code)")
            eventBroadcaster.publish(.authenticationFailed(error))
            if configuration.fallbackPolicy == .none, state?.session == nil { heartbeat.autoEstablish = false }
        }
    }

    static func providerTimeout(_ timeout: Duration) -> TesseraError {
        TesseraError(
            .identityTokenProviderTimedOut, message: "The identity-token provider did not answer within \(timeout).")
    }
    /// Asks `provider` for a token, within ``TesseraConfiguration/identityTokenTimeout`` on the client's clock.
    /// - Throws: `identity_token_provider_timed_out` at the deadline; the provider's error otherwise.
    func identityToken(
        from provider: any IdentityTokenProvider, for request: IdentityTokenRequest
    ) async throws -> String? {
        let timeout = configuration.identityTokenTimeout
        return try await Deadline.run(
            timeout, clock: clock,
            timeoutError: { Self.providerTimeout(timeout) },
            { try await provider.identityToken(for: request) })
    }
}
