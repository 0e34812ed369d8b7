import Foundation
import Synchronization
import Tessera
import TesseraTokens
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sessions bound to the device key, SDK ↔ live server: the key survives the process, a device that
/// comes back without its key is signed in again within one start and never signed out, and a bound
/// session's credential is worth nothing without the key's proof.
@Suite("Device-bound sessions against a live server", .timeLimit(.minutes(2)))
struct DeviceKeyEndToEndTests {
    typealias Harness = EndToEndTests.Harness

    /// Where the SDK keeps the device key in its store (the default storage key's).
    static let deviceKeyName = "tessera-device-key"

    /// Records every session state and event of a client from before its start.
    final class Recorder: Sendable {
        let states = Mutex<[Availability<Session>]>([])
        let events = Mutex<[TesseraEvent]>([])
        private let tasks = Mutex<[Task<Void, Never>]>([])

        init(_ client: TesseraClient) {
            let sessionUpdates = client.sessionUpdates
            let eventStream = client.events
            let recording = [
                Task { [self] in for await state in sessionUpdates { states.withLock { $0.append(state) } } },
                Task { [self] in for await event in eventStream { events.withLock { $0.append(event) } } },
            ]
            tasks.withLock { $0 = recording }
        }

        func stop() { tasks.withLock { for task in $0 { task.cancel() } } }

        /// Waits (without sleeping) until an event matching `predicate` was recorded.
        func waitForEvent(_ predicate: @Sendable (TesseraEvent) -> Bool) async {
            while !events.withLock({ $0.contains(where: predicate) }) { await Task.yield() }
        }

        func waitForState(_ predicate: @Sendable (Availability<Session>) -> Bool) async {
            while !states.withLock({ $0.contains(where: predicate) }) { await Task.yield() }
        }

        /// Whether anything was published that an app would show as a sign-out.
        var publishedASignOut: Bool {
            let signedOutEvent = events.withLock {
                $0.contains { event in
                    if case .signedOut = event { return true }
                    if case .sessionEnded = event { return true }
                    return false
                }
            }
            let unavailable = states.withLock {
                $0.contains { state in
                    guard let reason = state.reason else { return false }
                    return reason != .neverSignedIn
                }
            }
            return signedOutEvent || unavailable
        }
    }

    /// A raw request to the live server: status and JSON.
    static func call(
        _ server: Harness, _ method: String, _ path: String, authorization: String, dpop: String? = nil,
        body: String? = nil
    ) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: server.baseURL.appendingPathComponent(path))
        request.httpMethod = method
        request.setValue(authorization, forHTTPHeaderField: "Authorization")
        if let dpop { request.setValue(dpop, forHTTPHeaderField: "DPoP") }
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, json)
    }

    static func errorCode(_ json: [String: Any]) -> String? { json.string("error", "code") }

    @Test("A session bound in one process works in the next one on the same store")
    func boundSessionSurvivesTheProcess() async throws {
        try await EndToEndTests.withServerAndState { server, state in
            let first = server.client(stateDirectory: state)
            try await first.start()
            let session = try #require(await first.sessions.current)
            let binding = try #require(session.binding, "the session is bound to the device key")
            #expect(binding.keyTier == .software)
            #expect(await first.deviceKeyTier == .software)
            await first.stop()

            // The next process: the same key from the store, the same session, and its proofs pass.
            let next = server.client(stateDirectory: state)
            try await next.start()
            #expect(await next.sessions.current?.id == session.id)
            let checked = try await next.sessions.authenticate()
            #expect(checked.id == session.id && checked.binding?.thumbprint == binding.thumbprint)
            _ = try await next.authorizationHeader()
            #expect(try await next.sessions.list().contains { $0.id == session.id })
            await next.stop()
        }
    }

    @Test("A bound session's token or JWT without the key's proof is refused: 401 dpop_proof_required")
    func credentialWithoutProofIsRefused() async throws {
        try await EndToEndTests.withServerAndState { server, state in
            let client = server.client(stateDirectory: state)
            try await client.start()
            let token = try #require(client.currentSessionToken)
            let jwt = try #require(client.currentSessionJWT)
            #expect(try SessionClaims.unverified(from: jwt).confirmation != nil, "the JWT carries cnf.jkt")
            let (status, json) = try await Self.call(
                server, "POST", "v1/sessions/authenticate", authorization: "Bearer \(token)")
            #expect(status == 401 && Self.errorCode(json) == "dpop_proof_required")
            let (meStatus, me) = try await Self.call(server, "GET", "v1/me", authorization: "DPoP \(jwt)")
            #expect(meStatus == 401 && Self.errorCode(me) == "dpop_proof_required")
            // The SDK itself still gets through.
            _ = try await client.sessions.authenticate()
            await client.stop()
        }
    }

    @Test("An anonymous device restored without its key comes back through the installation secret, same profile")
    func anonymousRestoredWithoutKey() async throws {
        try await EndToEndTests.withServerAndState { server, state in
            let first = server.client(stateDirectory: state)
            try await first.start()
            let before = try #require(await first.sessions.current)
            let profileID = try #require(await first.profile?.id)
            await first.stop()
            // The backup restored the store, not the key (a Secure Enclave key never leaves its device).
            try EncryptedFileStore(directory: state).remove(Self.deviceKeyName)

            let restored = server.client(stateDirectory: state)
            let recorder = Recorder(restored)
            try await restored.start()
            let after = try #require(await restored.sessions.current, "signed in within one start")
            #expect(after.id != before.id)
            #expect(await restored.profile?.id == profileID, "the installation's own anonymous identity")
            #expect(after.binding?.thumbprint != nil && after.binding?.thumbprint != before.binding?.thumbprint)
            _ = try await restored.sessions.authenticate()
            // A marker: everything published before it has been recorded.
            _ = try await restored.identify(signedIdentityToken: server.identityToken(sub: "restored-anon"))
            await recorder.waitForEvent { if case .identified = $0 { return true } else { return false } }
            #expect(!recorder.publishedASignOut, "\(recorder.events.withLock { $0 })")
            recorder.stop()
            await restored.stop()
        }
    }

    @Test("An identified device restored without its key is identified again through the provider in one start")
    func identifiedRestoredWithoutKey() async throws {
        try await EndToEndTests.withServerAndState { server, state in
            let first = server.client(stateDirectory: state)
            try await first.start()
            try await first.identify(signedIdentityToken: server.identityToken(sub: "restored-alice"))
            let before = try #require(await first.sessions.current)
            let profileID = try #require(await first.profile?.id)
            await first.stop()
            try EncryptedFileStore(directory: state).remove(Self.deviceKeyName)

            let asked = Mutex<[IdentityTokenRequest]>([])
            let provider = ClosureIdentityTokenProvider { request in
                asked.withLock { $0.append(request) }
                return server.identityToken(sub: "restored-alice")
            }
            let restored = server.client(stateDirectory: state, provider: provider)
            let recorder = Recorder(restored)
            try await restored.start()
            let after = try #require(await restored.sessions.current, "signed in within one start")
            #expect(after.id != before.id)
            #expect(await restored.profile?.id == profileID)
            #expect(await restored.profile?.externalID == "restored-alice")
            #expect(await restored.capabilities?.authenticated == true)
            #expect(asked.withLock { $0.map(\.reason) } == [.deviceKeyLost])
            _ = try await restored.sessions.authenticate()
            await recorder.waitForEvent { if case .identified = $0 { return true } else { return false } }
            await recorder.waitForState { $0.value?.id == after.id }
            #expect(!recorder.publishedASignOut, "\(recorder.events.withLock { $0 })")
            recorder.stop()
            await restored.stop()
        }
    }

    @Test("revokeOtherSessions() proves the key: the user's other bound session ends")
    func revokeOthersWithProof() async throws {
        try await EndToEndTests.withServer { server in
            let phone = EndToEndTests.temporaryDirectory()
            let tablet = EndToEndTests.temporaryDirectory()
            defer {
                try? FileManager.default.removeItem(at: phone)
                try? FileManager.default.removeItem(at: tablet)
            }
            let first = server.client(stateDirectory: phone)
            let second = server.client(stateDirectory: tablet)
            try await first.start()
            try await second.start()
            try await first.identify(signedIdentityToken: server.identityToken(sub: "two-devices"))
            try await second.identify(signedIdentityToken: server.identityToken(sub: "two-devices"))
            #expect(try await first.revokeOtherSessions() == 1)
            _ = try await first.sessions.authenticate()
            await first.stop()
            await second.stop()
        }
    }

    @Test("A bound session extends through the SDK: its proof names the body; the heartbeat's repeats")
    func boundExtension() async throws {
        try await EndToEndTests.withServerAndState { server, state in
            let client = server.client(stateDirectory: state)
            try await client.start()
            try await client.identify(signedIdentityToken: server.identityToken(sub: "extends"))
            let before = try #require(await client.sessions.current)
            #expect(before.binding != nil)
            // Accepted only with a proof that names this body (else 401 dpop_proof_invalid); the
            // project's maximum caps it, so expiry may stay where the sign-in put it.
            let extended = try await client.sessions.authenticate(duration: .seconds(90 * 86_400))
            #expect(extended.expiresAt >= before.expiresAt)
            #expect(try await client.sessions.authenticate().id == before.id)
            await client.stop()
        }
    }

    @Test("dpop_nonce_required: the SDK retries once with the server's nonce and keeps using it")
    func noncesAreFollowed() async throws {
        try await EndToEndTests.withServer { server in
            let (status, _) = try await Self.call(
                server, "PATCH", "v1/admin/project", authorization: "Bearer \(server.project.secretKey)",
                body: #"{"dpop_nonce_required":true}"#)
            #expect(status == 200)
            let state = EndToEndTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: state) }
            let client = server.client(stateDirectory: state)
            try await client.start()
            #expect(await client.sessions.current?.binding != nil)
            _ = try await client.sessions.authenticate()
            try await client.identify(signedIdentityToken: server.identityToken(sub: "nonce-user"))
            #expect(await client.profile?.externalID == "nonce-user")
            await client.stop()
        }
    }
}
