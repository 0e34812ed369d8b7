import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

@Suite("Listing, revoking and deleting sessions; /v1/me")
struct SessionManagementTests {
    @Test("GET /v1/sessions lists the live sessions of the caller's profile")
    func list() async throws {
        try await TestEnvironment.withApp { environment, client in
            let (first, second) = try await client.anonymousTwice()
            _ = try await client.anonymous()
            let list = try await client.send(.get, "/v1/sessions", bearer: first.sessionToken)
            #expect(list.status == .ok)
            let ids = (list.json["sessions"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
            #expect(Set(ids ?? []) == Set([first.sessionID, second.sessionID].compactMap { $0 }))
            _ = try await client.send(.post, "/v1/sessions/revoke", bearer: second.sessionToken)
            let after = try await client.send(.get, "/v1/sessions", bearer: first.sessionToken)
            #expect((after.json["sessions"] as? [Any])?.count == 1)
        }
    }

    @Test("DELETE /v1/sessions/{id}: 204 for one's own, 404 for anyone else's")
    func delete() async throws {
        try await TestEnvironment.withApp { environment, client in
            let (mine, mineToo) = try await client.anonymousTwice()
            let someoneElse = try await client.anonymous()
            let foreign = try await client.send(
                .delete, "/v1/sessions/\(try #require(someoneElse.sessionID))", bearer: mine.sessionToken)
            #expect(foreign.status == .notFound)
            #expect(foreign.errorCode == "not_found")
            #expect(try await client.send(.get, "/v1/me", bearer: someoneElse.sessionToken).status == .ok)
            let own = try await client.send(
                .delete, "/v1/sessions/\(try #require(mineToo.sessionID))", bearer: mine.sessionToken)
            #expect(own.status == .noContent)
            #expect(try await client.send(.get, "/v1/me", bearer: mineToo.sessionToken).errorCode == "session_revoked")
            let again = try await client.send(
                .delete, "/v1/sessions/\(try #require(mineToo.sessionID))", bearer: mine.sessionToken)
            #expect(again.status == .notFound)
            let unknown = try await client.send(.delete, "/v1/sessions/ses_unknown", bearer: mine.sessionToken)
            #expect(unknown.status == .notFound)
        }
    }

    @Test("GET /v1/me answers the profile and capabilities")
    func me() async throws {
        try await TestEnvironment.withApp { environment, client in
            let identified = try await client.identify(token: environment.identityToken(sub: "me-user", name: "Me"))
            let reply = try await client.send(.get, "/v1/me", bearer: identified.sessionToken)
            #expect(reply.status == .ok)
            #expect(reply["profile"]["id"] as? String == identified.profileID)
            #expect(reply["profile"]["name"] as? String == "Me")
            #expect(reply["capabilities"]["authenticated"] as? Bool == true)
            #expect(reply.json["session_token"] == nil)
        }
    }

    @Test("Shared device: after sign-out nothing of the previous user is reachable from the next session")
    func sharedDevice() async throws {
        try await TestEnvironment.withApp { environment, client in
            let installationID = UUID().uuidString.lowercased()
            let secret = OpaqueToken.installationSecret()
            let anonymous = try await client.anonymous(installationID: installationID, secret: secret)
            let alice = try await client.identify(
                token: environment.identityToken(sub: "alice", email: "alice@example.com"),
                bearer: anonymous.sessionToken)
            let device = try await client.registerDevice(
                bearer: alice.sessionToken, platform: "apns", token: "alice-push")
            #expect(device.status == .created)
            #expect(
                try await client.send(.post, "/v1/sessions/revoke", bearer: alice.sessionToken).status == .noContent)

            let next = try await client.anonymous(installationID: installationID, secret: secret)
            #expect(next.status == .ok)
            #expect(next.profileID != alice.profileID)
            #expect(next["profile"]["kind"] as? String == "anonymous")
            #expect(next["profile"]["email"] is NSNull)
            let sessions = try await client.send(.get, "/v1/sessions", bearer: next.sessionToken)
            let ids = (sessions.json["sessions"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
            #expect(!ids.contains(try #require(alice.sessionID)))
            let deleteAlicesDevice = try await client.send(
                .delete, "/v1/devices/\(try #require(device["device"]["id"] as? String))", bearer: next.sessionToken)
            #expect(deleteAlicesDevice.status == .notFound)
            #expect(try await client.adminList("devices", of: alice.profileID)?.isEmpty == true)
            let bob = try await client.identify(sub: "bob", bearer: next.sessionToken)
            #expect(bob.profileID != alice.profileID)
            #expect(bob["merge"]["outcome"] as? String == "promoted")
        }
    }
}
