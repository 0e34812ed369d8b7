import Foundation
import Hummingbird
import HummingbirdTesting
import Tessera
import TesseraServer
import TesseraTokens
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The SDK, with its default URLSession transport and encrypted file store, against a live Tessera
/// server on loopback (real socket, real SQLite).
@Suite struct EndToEndTests {
    /// A live server with one project, and the pieces the tests need.
    struct Harness: Sendable {
        let port: Int
        let project: ProvisionedProject

        var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

        func client(
            stateDirectory: URL,
            provider: (any IdentityTokenProvider)? = nil
        ) -> TesseraClient {
            TesseraClient(
                configuration: TesseraConfiguration(
                    serverURL: baseURL,
                    publishableKey: project.publishableKey,
                    credentialStore: EncryptedFileStore(directory: stateDirectory),
                    identityTokenProvider: provider,
                    observesApplicationLifecycle: false
                )
            )
        }

        func identityToken(sub: String, lifetime: TimeInterval = 300, now: Date = Date()) -> String {
            IdentityTokenMinter(secret: project.identitySecret).mint(
                IdentityClaims(
                    subject: sub, expiration: now.addingTimeInterval(lifetime), audience: [project.project.id],
                    issuedAt: now, name: "User \(sub)", email: "\(sub)@example.com")
            )
        }

        /// `GET`/`POST` an admin endpoint with the secret key; returns status and JSON.
        func admin(_ method: String, _ path: String) async throws -> (Int, [String: Any]) {
            var request = URLRequest(url: baseURL.appendingPathComponent(path))
            request.httpMethod = method
            request.setValue("Bearer \(project.secretKey)", forHTTPHeaderField: "Authorization")
            let (data, response) = try await URLSession.shared.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
            return (status, json)
        }

        func liveDeviceCount(profileID: String) async throws -> Int {
            let (status, json) = try await admin("GET", "/v1/admin/profiles/\(profileID)/devices")
            #expect(status == 200)
            return (json["devices"] as? [Any])?.count ?? -1
        }
    }

    static func withServer(_ body: @escaping @Sendable (Harness) async throws -> Void) async throws {
        // On a port its public URL names: the SDK's DPoP proofs are checked against it.
        try await LiveNode.run(project: "E2E") { port, project in
            try await body(Harness(port: port, project: project))
        }
    }

    /// Runs `body` against a live server, with a new state directory for its clients, removed afterwards.
    static func withServerAndState(_ body: @escaping @Sendable (Harness, URL) async throws -> Void) async throws {
        try await withServer { server in
            let state = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: state) }
            try await body(server, state)
        }
    }

    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("tessera-e2e-state-\(UUID())")
    }

    @Test func anonymousFirstThenRestoredByASecondClient() async throws {
        try await Self.withServerAndState { server, state in
            let first = server.client(stateDirectory: state)
            try await first.start()
            let profile = try #require(await first.profile)
            #expect(profile.kind.rawValue == "anonymous")
            #expect(await first.capabilities?.authenticated == false)
            let installation = await first.installationID

            let second = server.client(stateDirectory: state)
            try await second.start()
            #expect(await second.installationID == installation)
            #expect(await second.profile?.id == profile.id)
        }
    }

    @Test func signedIdentityMergesThenSignOutLeavesNothingForTheNextUser() async throws {
        try await Self.withServerAndState { server, state in
            let client = server.client(stateDirectory: state)
            try await client.start()
            let anonymousProfile = try #require(await client.profile)

            let capabilities = try await client.identify(signedIdentityToken: server.identityToken(sub: "alice"))
            #expect(capabilities.authenticated)
            let alice = try #require(await client.profile)
            #expect(alice.externalID == "alice")
            #expect(alice.verified)
            #expect(alice.id == anonymousProfile.id)  // promoted: the anonymous history is carried over

            _ = try await client.registerDeviceToken("apns-token-alice", platform: .apns, environment: .sandbox)
            #expect(try await server.liveDeviceCount(profileID: alice.id) == 1)

            try await client.signOut()
            #expect(try await server.liveDeviceCount(profileID: alice.id) == 0)
            let (_, sessions) = try await server.admin("GET", "/v1/admin/profiles/\(alice.id)/sessions")
            #expect((sessions["sessions"] as? [Any])?.isEmpty == true)
            let next = try #require(await client.profile)
            #expect(next.id != alice.id)
            #expect(next.kind.rawValue == "anonymous")
            #expect(next.externalID == nil)

            // The next user on the same store sees nothing of Alice.
            let bob = try await client.identify(signedIdentityToken: server.identityToken(sub: "bob"))
            #expect(bob.authenticated)
            #expect(await client.profile?.externalID == "bob")
            #expect(await client.profile?.id != alice.id)
            let own = try await client.sessions.list()
            #expect(own.allSatisfy { $0.profileID != alice.id })
        }
    }

    @Test func revokeOtherSessionsSignsOutEveryOtherDeviceAndKeepsThisOne() async throws {
        try await Self.withServer { server in
            let (phoneState, tabletState) = (Self.temporaryDirectory(), Self.temporaryDirectory())
            defer {
                try? FileManager.default.removeItem(at: phoneState)
                try? FileManager.default.removeItem(at: tabletState)
            }
            // Alice on two devices, each with its push token.
            let phone = server.client(stateDirectory: phoneState)
            let tablet = server.client(stateDirectory: tabletState)
            for device in [phone, tablet] {
                try await device.start()
                _ = try await device.identify(signedIdentityToken: server.identityToken(sub: "alice-everywhere"))
            }
            _ = try await phone.registerDeviceToken("apns-phone", platform: .apns, environment: .sandbox)
            _ = try await tablet.registerDeviceToken("apns-tablet", platform: .apns, environment: .sandbox)
            let alice = try #require(await phone.profile)
            #expect(await tablet.profile?.id == alice.id)
            let tabletToken = try #require(await tablet.sessions.token)

            #expect(try await phone.revokeOtherSessions() == 1)
            let (_, sessions) = try await server.admin("GET", "/v1/admin/profiles/\(alice.id)/sessions")
            let live = (sessions["sessions"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(live == [try #require(await phone.sessions.current?.id)], "only the phone's session is live")
            let (_, devices) = try await server.admin("GET", "/v1/admin/profiles/\(alice.id)/devices")
            let tokens = (devices["devices"] as? [[String: Any]] ?? []).compactMap { $0["token"] as? String }
            #expect(tokens == ["apns-phone"], "the tablet's push token went with its session")
            #expect(try await phone.sessions.list().map(\.id) == live)
            // The tablet learns it at its next check: its session was revoked.
            await #expect(throws: TesseraError.self) { try await tablet.sessions.authenticate() }
            #expect(await tablet.sessions.token != tabletToken)
            // Nothing left to end.
            #expect(try await phone.sessions.revokeOthers() == 0)
        }
    }

    @Test func anExpiredIdentityTokenIsATypedErrorAndLeavesTheSDKAnonymous() async throws {
        try await Self.withServerAndState { server, state in
            let client = server.client(stateDirectory: state)
            try await client.start()
            let before = await client.profile
            let expired = server.identityToken(sub: "carol", lifetime: -600)
            let error = await #expect(throws: TesseraError.self) {
                _ = try await client.identify(signedIdentityToken: expired)
            }
            #expect(error?.code == .identityTokenExpired)
            #expect(await client.profile == before)
            #expect(await client.capabilities?.authenticated == false)
        }
    }

    @Test func anAdminRevokeIsNoticedAndTheProviderReIdentifies() async throws {
        try await Self.withServer { server in
            struct Provider: IdentityTokenProvider {
                let server: Harness
                func identityToken(for request: IdentityTokenRequest) async throws -> String? {
                    server.identityToken(sub: request.externalUserID ?? "dave")
                }
            }
            let state = Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: state) }
            let client = server.client(stateDirectory: state, provider: Provider(server: server))
            try await client.start()
            _ = try await client.identify(signedIdentityToken: server.identityToken(sub: "dave"))
            let dave = try #require(await client.profile)
            let revokedSession = await client.sessions.current?.id

            let updates = client.sessionUpdates
            let (status, _) = try await server.admin("POST", "/v1/admin/profiles/\(dave.id)/sessions/revoke")
            #expect(status == 204)
            // The heartbeat's check notices the revoke; the provider then establishes a new verified session
            // in the background. Await that published change itself (bounded, so a regression cannot hang CI).
            _ = try? await client.sessions.authenticate()
            let replacement = try await withThrowingTaskGroup(of: String?.self) { group in
                group.addTask {
                    for await update in updates {
                        if case .available(let session, _) = update, session.id != revokedSession {
                            return session.id
                        }
                    }
                    return nil
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(30))
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                return first
            }
            #expect(replacement != nil)
            #expect(await client.capabilities?.authenticated == true)
            #expect(await client.profile?.externalID == "dave")
            #expect(await client.sessions.current?.id != revokedSession)
        }
    }
}
