import Foundation
import TesseraTokens

extension TesseraClient {
    enum IdentityAssertion: Sendable {
        case signed(String)
        case userID(String)

        /// The user ID the assertion claims, read without verification (the server verifies).
        var subject: String? {
            switch self {
            case .userID(let id): return id
            case .signed(let token): return IdentityTokenPeek.subject(of: token)
            }
        }
    }

    /// Exchanges a signed identity token, minted by the app's backend, for a verified session.
    ///
    /// When the current session is anonymous, the server carries its profile into the identified one
    /// (see ``TesseraEvent/identified(_:capabilities:merge:)``). On failure nothing changes: the SDK
    /// stays anonymous, or signed in as it was, and the error is typed (`identity_token_expired`,
    /// `invalid_signature`, …). A registered push token moves to the new session.
    /// - Parameter signedIdentityToken: The compact JWS from the app's backend.
    /// - Returns: The new session's capabilities (`authenticated == true`).
    /// - Throws: ``TesseraError`` — `external_user_id_changed` when another user is signed in
    ///   (sign out first), `superseded` when a sign-out, a reset or a newer identify that already
    ///   replaced the session overtook this one. (Overtaken only by newer identifies that are still on
    ///   their way or were refused, it keeps its answer; a newer one that succeeds then replaces it.)
    @discardableResult
    public func identify(signedIdentityToken: String) async throws -> Capabilities {
        try await identify(.signed(signedIdentityToken))
    }

    /// Identifies with a client-asserted user ID: never authenticated, and only when the project allows it
    /// (`unverified_identify_disabled` otherwise).
    /// - Parameter userID: The app's user ID.
    /// - Returns: The new session's capabilities (`authenticated == false`, kind `unverified`).
    @discardableResult
    public func identify(userID: String) async throws -> Capabilities {
        try await identify(.userID(userID))
    }

    private func identify(_ assertion: IdentityAssertion) async throws -> Capabilities {
        let current = try await requireState()
        if let session = current.session, session.profile.kind == .identified,
            let signedIn = session.profile.externalID, let claimed = assertion.subject,
            !claimed.utf8.elementsEqual(signedIn.utf8)
        {
            throw TesseraError(
                .externalUserIDChanged, message: "Another user is signed in; sign out before identifying a new one.")
        }
        return try await performIdentify(assertion, generation: ledger.advanceForIdentify())
    }

    /// Sends the identify request under generation `gen` and applies its answer if still current.
    func performIdentify(_ assertion: IdentityAssertion, generation gen: UInt64) async throws -> Capabilities {
        ledger.identityOperations += 1
        defer { ledger.identityOperations -= 1 }
        let previous = state?.session
        let identifiesBefore = ledger.identifyGenerations
        var body: IdentifyRequest
        let minutes = configuration.identifiedSessionDuration.map { Int($0.timeInterval / 60) }
        switch assertion {
        case .signed(let token): body = IdentifyRequest(identityToken: token, sessionDurationMinutes: minutes)
        case .userID(let id): body = IdentifyRequest(userID: id, sessionDurationMinutes: minutes)
        }
        let envelope: SessionEnvelope
        let api = self.api
        // A session bound to a device key that is gone cannot identify: the publishable key does.
        var credential = previous.flatMap { isBoundToAnotherKey($0) ? nil : $0.token } ?? api.publishableKey
        // The identify's installation is its calling session's: its evidence proves that installation.
        let installationID = credential == api.publishableKey ? nil : previous?.session.installationID
        var retry: AppAttestation.Retry?
        var retried = false
        var prepared = AppAttestation.Prepared()
        while true {
            do {
                envelope = try await appAttestation.inTurn { () async throws(TesseraError) in
                    prepared =
                        retry?.withEvidence == false
                        ? AppAttestation.Prepared()
                        : await appAttestation.forIdentify(
                            installationID: installationID, newKey: retry?.newKey ?? false,
                            challenge: { () async throws(TesseraError) in try await api.appAttestChallenge() })
                    body.evidence = prepared.evidence
                    let body = body
                    let credential = credential
                    return try await Self.uncancelled { () async throws(TesseraError) in
                        try await api.identify(body, credential: credential)
                    }
                }
                appAttestation.succeeded(prepared, installationID: installationID)
                break
            } catch {
                // Refused for its evidence (a key the server does not know, an expired challenge): once
                // more with new evidence, never in a loop.
                if !retried, let again = appAttestation.retry(after: error, sent: prepared, atIdentify: true) {
                    try check(gen)
                    retried = true
                    retry = again
                    continue
                }
                guard error.endsSession, previous != nil else { throw error }
                // Our own session is gone on the server: identify with the publishable key instead (which
                // has no installation to prove).
                try check(gen)
                credential = api.publishableKey
                prepared = AppAttestation.Prepared()
                body.evidence = await appAttestation.forIdentify(
                    installationID: nil, newKey: false,
                    challenge: { () async throws(TesseraError) in try await api.appAttestChallenge() }
                ).evidence
                let body = body
                envelope = try await Self.uncancelled { () async throws(TesseraError) in
                    try await api.identify(body, credential: api.publishableKey)
                }
                break
            }
        }
        // Overtaken only by newer identifies that have not changed the session (still on their way, or
        // refused): the server has already ended `previous` if this identify ended it (an anonymous or
        // the same profile's session), so this answer is the one live session. It is applied; a newer
        // identify that succeeds replaces it and ends it (`replaced` below).
        let overtakenByIdentifiesOnly =
            ledger.onlyIdentifiesStarted(since: gen, identifiesBefore: identifiesBefore) && state != nil
            && state?.session?.token == previous?.token
        if !ledger.isCurrent(gen), !overtakenByIdentifiesOnly {
            await abandon(sessionToken: envelope.sessionToken)
            try check(gen)
        }
        let device = state?.device
        // Without a session, this identify went with the publishable key; an anonymous session asked for
        // meanwhile (by the heartbeat or refreshSession()) may have arrived first: it is replaced, and ended below.
        let replaced = state?.session.flatMap { $0.token == previous?.token ? nil : $0 }
        apply(envelope)
        log(.info, "identified as profile \(envelope.profile.id) (\(envelope.capabilities.kind.rawValue))")
        eventBroadcaster.publish(
            .identified(envelope.profile, capabilities: envelope.capabilities, merge: envelope.merge))
        if let device, device.sessionToken == previous?.token || device.sessionToken == replaced?.token {
            // The server ended the anonymous session and its push token with it: bind the token to the new one.
            do {
                _ = try await registerDeviceToken(
                    device.pushToken, platform: device.device.platform, environment: device.device.environment)
            } catch {
                log(.warning, "could not move the push token to the new session: \(TesseraError.wrapping(error).code)")
            }
        }
        if let replaced { await abandon(sessionToken: replaced.token) }
        return envelope.capabilities
    }
}

extension TesseraClient {
    /// Sends a request that creates a session so that the calling task's cancellation cannot drop its
    /// answer: once sent, the request runs to its end and its session is applied or revoked (a cancelled
    /// caller used to drop a session the server had opened, and ended the one it replaced). Throws
    /// `cancelled` without sending when the caller is cancelled already.
    static func uncancelled<Value: Sendable>(
        _ body: @escaping @Sendable () async throws(TesseraError) -> Value
    ) async throws(TesseraError) -> Value {
        if Task.isCancelled { throw TesseraError(.cancelled, message: "The task was cancelled.") }
        let result = await Task { () async -> Result<Value, TesseraError> in
            do throws(TesseraError) {
                return .success(try await body())
            } catch {
                return .failure(error)
            }
        }.value
        return try result.get()
    }
}

/// Reads the `sub` of an identity token without verifying it, to refuse a user switch locally.
enum IdentityTokenPeek {
    static func subject(of token: String) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
            let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
        else { return nil }
        return object["sub"] as? String
    }
}
