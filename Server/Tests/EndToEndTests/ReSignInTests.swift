import Foundation
import Testing

@testable import Tessera

/// A silent re-sign-in, against a live server: the backend revokes the user's sessions, the SDK's
/// identity-token provider signs the same user back in, and the push token registered before is bound to
/// the new session.
@Suite("Silent re-sign-in against a live server")
struct ReSignInTests {
    @Test("After a server-side revoke, the provider's re-sign-in carries the push token over")
    func pushTokenCarriedOver() async throws {
        try await LiveServer.run { server in
            let provider = ClosureIdentityTokenProvider { request in
                request.externalUserID.map { server.identityToken(sub: $0) }
            }
            let client = TesseraClient(
                configuration: TesseraConfiguration(
                    serverURL: server.baseURL, publishableKey: server.project.publishableKey,
                    credentialStore: InMemoryCredentialStore(), identityTokenProvider: provider,
                    observesApplicationLifecycle: false))
            try await client.start()
            await client.stop()
            try await client.identify(signedIdentityToken: server.identityToken(sub: "resign-alice"))
            let before = try #require(await client.sessions.current)
            let profileID = try #require(await client.profile?.id)
            try await client.registerDeviceToken("resign-push", platform: .apns, environment: .sandbox)

            let revoked = try await server.admin("POST", "/v1/admin/profiles/\(profileID)/sessions/revoke")
            #expect(revoked.status == 204)
            await #expect(throws: TesseraError.self) { try await client.sessions.authenticate() }
            await client.heartbeat.reestablishTask?.value

            let after = try #require(await client.sessions.current, "the provider signed the user back in")
            #expect(after.id != before.id)
            #expect(await client.profile?.id == profileID)
            let device = try #require(await client.registeredDevice, "registeredDevice says the token is bound")
            #expect(device.sessionID == after.id)
            let live = try await server.liveDevices(profileID: profileID) ?? []
            #expect(live.map { $0["token"] as? String } == ["resign-push"])
            #expect(live.first?["session_id"] as? String == after.id)
        }
    }
}
