import Foundation
import Testing

@testable import Tessera

@Suite("Only three codes end a session")
struct SessionEndTests {
    @Test(
        "Errors that keep the session",
        arguments: [
            Outcome.reply(.error(401, "invalid_credentials")), .reply(.error(400, "invalid_request")),
            .reply(.error(403, "forbidden_something_new")), .reply(.error(500, "internal")),
            .reply(.error(502, "bad_gateway")), .reply(.error(429, "rate_limited")),
            .reply(Reply(status: 503, body: Data("<html>".utf8))), .failure(.notConnectedToInternet),
            .failure(.timedOut), .failure(.cancelled), .failure(.networkConnectionLost),
        ])
    func errorsKeepTheSession(outcome: Outcome) async throws {
        let harness = Harness()
        let client = try await harness.start(quiet: true)
        let before = try #require(await client.sessions.current)
        harness.server.script("POST /v1/sessions/authenticate", outcome)
        await #expect(throws: TesseraError.self) { try await client.sessions.authenticate() }
        #expect(await client.sessions.current == before)
        #expect(client.sessionState.value == before)
        #expect(try harness.storedState()?.session?.session == before)
    }

    @Test(
        "session_not_found, session_expired and session_revoked end it",
        arguments: [
            ("session_not_found", UnavailableReason.revoked), ("session_expired", .expired),
            ("session_revoked", .revoked),
        ])
    func endingCodes(code: String, reason: UnavailableReason) async throws {
        let harness = Harness(fallback: .none)
        let client = try await harness.start(quiet: true)
        let recorder = Recorder(client.sessionUpdates)
        harness.server.script("POST /v1/sessions/authenticate", .reply(.error(401, code)))
        await #expect {
            try await client.sessions.authenticate()
        } throws: { error in
            (error as? TesseraError)?.code.rawValue == code && (error as? TesseraError)?.endsSession == true
        }
        _ = await recorder.first { $0 == .unavailable(reason) }
        #expect(await client.sessions.current == nil)
    }

    @Test("TesseraError answers isTransient and endsSession")
    func errorClassification() {
        let ending: [TesseraError.Code] = [.sessionNotFound, .sessionExpired, .sessionRevoked]
        let all: [TesseraError.Code] = [
            .invalidRequest, .payloadTooLarge, .invalidAPIKey, .invalidCredentials, .invalidIdentityToken,
            .invalidSignature, .unsupportedAlgorithm, .identityTokenExpired, .identityTokenNotYetValid,
            .identityTokenLifetimeTooLong, .identityTokenReplayed, .audienceMismatch, .invalidClaims, .invalidEmail,
            .invalidName, .invalidAvatarURL, .externalUserIDChanged, .unverifiedIdentifyDisabled,
            .installationConflict, .invalidSessionDuration, .notFound, .rateLimited, .network, .timeout,
            .serverUnavailable, .invalidResponse, .cancelled, .superseded, .storageUnavailable, .storageCorrupted,
            .noSession, "some_future_code",
        ]
        for code in all { #expect(!TesseraError(code).endsSession) }
        for code in ending { #expect(TesseraError(code, httpStatus: 401).endsSession) }
        for code in [TesseraError.Code.network, .timeout, .serverUnavailable, .rateLimited, .storageUnavailable] {
            #expect(TesseraError(code).isTransient)
        }
        #expect(TesseraError("whatever", httpStatus: 503).isTransient)
        #expect(!TesseraError(.cancelled).isTransient)
        #expect(!TesseraError(.invalidCredentials, httpStatus: 401).isTransient)
        #expect(TesseraError.wrapping(URLError(.timedOut)).code == .timeout)
        #expect(TesseraError.wrapping(CancellationError()).code == .cancelled)
    }

    @Test("A revoked verified session is re-established through the identity-token provider")
    func providerReidentifies() async throws {
        let provider = StubProvider()
        let harness = Harness(provider: provider)
        let client = try await harness.start()
        try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        let verified = try #require(await client.sessions.current)
        await client.stop()
        provider.enqueue(.success(FakeServer.identityToken(sub: "alice")))
        let recorder = Recorder(client.sessionUpdates)
        harness.server.end(token: try #require(await client.sessions.token), code: "session_revoked")
        await #expect(throws: TesseraError.self) { try await client.sessions.authenticate() }
        let next = await recorder.first { ($0.value?.id).map { $0 != verified.id } ?? false }
        #expect(recorder.values.contains(.unavailable(.revoked)))
        #expect(provider.requests.withLock { $0 } == [IdentityTokenRequest(externalUserID: "alice", reason: .revoked)])
        #expect(await client.capabilities?.kind == .verified)
        #expect(await client.profile?.externalID == "alice")
        #expect(next.value?.profileID == verified.profileID)
    }

    @Test("No token from the provider: fresh anonymous identity and an authentication-failed event")
    func providerGivesNothing() async throws {
        let provider = StubProvider()
        let harness = Harness(provider: provider)
        let client = try await harness.start()
        let firstInstallation = try #require(await client.installationID)
        try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        let verified = try #require(await client.profile)
        await client.stop()
        provider.enqueue(.failure(TesseraError(.network)))
        let events = Recorder(client.events)
        let states = Recorder(client.sessionUpdates)
        harness.server.end(token: try #require(await client.sessions.token), code: "session_expired")
        await #expect(throws: TesseraError.self) { try await client.sessions.authenticate() }
        let failed = await events.first {
            if case .authenticationFailed = $0 { return true }
            return false
        }
        #expect(failed == .authenticationFailed(TesseraError(.network)))
        let verifiedID = verified.id
        _ = await states.first { $0 == .unavailable(.expired) }
        _ = await states.first { state in state.value.map { $0.profileID != verifiedID } ?? false }
        let profile = try #require(await client.profile)
        #expect(profile.kind == .anonymous)
        #expect(profile.id != verified.id, "never the merged profile")
        #expect(await client.installationID != firstInstallation, "a fresh installation, not the merged one")
    }
}
