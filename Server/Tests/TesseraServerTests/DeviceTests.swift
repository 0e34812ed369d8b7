import Foundation
import Testing

@testable import TesseraServer

@Suite("Devices")
struct DeviceTests {
    @Test("POST /v1/devices binds the token to the session: 201 {device} without the token")
    func register() async throws {
        try await TestEnvironment.withApp { environment, client in
            let session = try await client.anonymous()
            let reply = try await client.send(
                .post, "/v1/devices", bearer: session.sessionToken,
                body: #"{"platform":"fcm","token":"push-1","environment":"sandbox"}"#)
            #expect(reply.status == .created)
            let device = reply["device"]
            #expect((device["id"] as? String)?.hasPrefix("dev_") == true)
            #expect(device["platform"] as? String == "fcm")
            #expect(device["environment"] as? String == "sandbox")
            #expect(device["session_id"] as? String == session.sessionID)
            #expect(device["created_at"] is String)
            #expect(device["token"] == nil)
            let defaulted = try await client.registerDevice(
                bearer: session.sessionToken, platform: "apns", token: "push-2")
            #expect(defaulted["device"]["environment"] as? String == "production")
        }
    }

    @Test(
        "Bad device bodies are 400 invalid_request",
        arguments: [
            #"{"platform":"web","token":"x"}"#, #"{"platform":"apns","token":""}"#,
            #"{"platform":"apns","token":"x","environment":"dev"}"#, #"{"platform":"apns"}"#,
            #"{"platform":"apns","token":"has space"}"#,
        ])
    func badBodies(body: String) async throws {
        try await TestEnvironment.withApp { environment, client in
            let session = try await client.anonymous()
            let reply = try await client.send(.post, "/v1/devices", bearer: session.sessionToken, body: body)
            #expect(reply.status == .badRequest)
            #expect(reply.errorCode == "invalid_request")
        }
    }

    @Test("Registering a token bound elsewhere moves it to this session")
    func move() async throws {
        try await TestEnvironment.withApp { environment, client in
            let alice = try await client.identify(sub: "alice")
            let bob = try await client.identify(sub: "bob")
            _ = try await client.registerDevice(bearer: alice.sessionToken, platform: "apns", token: "shared")
            _ = try await client.registerDevice(bearer: bob.sessionToken, platform: "apns", token: "shared")
            #expect(try await client.adminList("devices", of: alice.profileID)?.isEmpty == true)
            let devices = try await client.adminList("devices", of: bob.profileID) ?? []
            #expect(devices.count == 1)
            #expect(devices.first?["token"] as? String == "shared")
            #expect(devices.first?["session_id"] as? String == bob.sessionID)
        }
    }

    @Test("Devices go with their session: revoke, expiry, identify")
    func deletedWithSession() async throws {
        try await TestEnvironment.withApp { environment, client in
            let user = try await client.identify(sub: "devices")
            let profileID = try #require(user.profileID)
            _ = try await client.registerDevice(bearer: user.sessionToken, platform: "apns", token: "t1")
            _ = try await client.send(.post, "/v1/sessions/revoke", bearer: user.sessionToken)
            #expect(try await client.adminList("devices", of: profileID)?.isEmpty == true)

            let short = try await client.identify(sub: "devices", extra: #","session_duration_minutes":5"#)
            _ = try await client.registerDevice(bearer: short.sessionToken, platform: "apns", token: "t2")
            environment.clock.advance(seconds: 301)
            #expect(try await client.adminList("devices", of: profileID)?.isEmpty == true)

            let anonymous = try await client.anonymous()
            _ = try await client.registerDevice(bearer: anonymous.sessionToken, platform: "fcm", token: "t3")
            let identified = try await client.identify(sub: "devices", bearer: anonymous.sessionToken)
            #expect(identified["merge"]["outcome"] as? String == "merged")
            #expect(try await client.adminList("devices", of: profileID)?.isEmpty == true)
        }
    }

    @Test("DELETE /v1/devices/{id}: 204 for the caller's profile, 404 otherwise")
    func delete() async throws {
        try await TestEnvironment.withApp { environment, client in
            let owner = try await client.anonymous()
            let stranger = try await client.anonymous()
            let device = try await client.registerDevice(bearer: owner.sessionToken, platform: "apns", token: "mine")
            let deviceID = try #require(device["device"]["id"] as? String)
            #expect(
                try await client.send(.delete, "/v1/devices/\(deviceID)", bearer: stranger.sessionToken).status
                    == .notFound)
            #expect(
                try await client.send(.delete, "/v1/devices/\(deviceID)", bearer: owner.sessionToken).status
                    == .noContent)
            #expect(
                try await client.send(.delete, "/v1/devices/\(deviceID)", bearer: owner.sessionToken).status
                    == .notFound)
        }
    }
}
