import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// The v1 changes to the existing contract: what a session may reach, extend and cache.
@Suite("Session boundaries")
struct SessionBoundaryTests {
    private func allowUnverified(_ client: APIClient) async throws {
        #expect(try await client.allowUnverifiedIdentify().status == .ok)
    }

    // MARK: 1. Promote ends the anonymous profile's other sessions

    @Test("Promote ends every other session of the anonymous profile, with its devices")
    func promoteEndsOrphans() async throws {
        try await TestEnvironment.withApp { environment, client in
            // The orphan: the same installation restored again (an answer the app never received).
            let (caller, orphan) = try await client.anonymousTwice()
            #expect(orphan.status == .ok)
            #expect(orphan.profileID == caller.profileID)
            let device = try await client.registerDevice(bearer: orphan.sessionToken, platform: "apns", token: "orphan")
            #expect(device.status == .created)
            let promoted = try await client.identify(
                token: environment.identityToken(sub: "alice", name: "Alice", email: "alice@example.com"),
                bearer: caller.sessionToken)
            #expect(promoted["merge"]["outcome"] as? String == "promoted")
            for credential in [orphan.sessionToken, orphan.sessionJWT] {
                let me = try await client.send(.get, "/v1/me", bearer: credential)
                #expect(me.status == .unauthorized)
                #expect(me.errorCode == "session_revoked")
                #expect(me["profile"]["email"] == nil)
            }
            let sessions = try await client.send(.get, "/v1/sessions", bearer: promoted.sessionToken)
            let ids = (sessions.json["sessions"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
            #expect(ids == [promoted.sessionID].compactMap { $0 })
            #expect(try await client.adminList("devices", of: promoted.profileID)?.isEmpty == true)
        }
    }

    // MARK: 2. Unverified sessions manage only themselves

    @Test("An unverified session lists only itself and cannot end the user ID's other sessions")
    func unverifiedManagesOnlyItself() async throws {
        try await TestEnvironment.withApp { environment, client in
            try await allowUnverified(client)
            let owner = try await client.identify(userID: "bob")
            let intruder = try await client.identify(userID: "bob")
            #expect(owner.profileID == intruder.profileID)
            let listed = try await client.send(.get, "/v1/sessions", bearer: intruder.sessionToken)
            let ids = (listed.json["sessions"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
            #expect(ids == [intruder.sessionID].compactMap { $0 })
            let ownerID = try #require(owner.sessionID)
            let refused = try await client.send(.delete, "/v1/sessions/\(ownerID)", bearer: intruder.sessionToken)
            #expect(refused.status == .notFound)
            #expect(refused.errorCode == "not_found")
            #expect(try await client.send(.get, "/v1/me", bearer: owner.sessionToken).status == .ok)
            // The owner's device is out of the intruder's reach too.
            let device = try await client.registerDevice(
                bearer: owner.sessionToken, platform: "fcm", token: "bobs-phone")
            let deviceID = try #require(device["device"]["id"] as? String)
            let removal = try await client.send(.delete, "/v1/devices/\(deviceID)", bearer: intruder.sessionToken)
            #expect(removal.status == .notFound)
            // Itself it may end, and its own device it may remove.
            let own = try await client.registerDevice(bearer: intruder.sessionToken, platform: "fcm", token: "own")
            let ownID = try #require(own["device"]["id"] as? String)
            #expect(
                try await client.send(.delete, "/v1/devices/\(ownID)", bearer: intruder.sessionToken).status
                    == .noContent)
            let intruderID = try #require(intruder.sessionID)
            #expect(
                try await client.send(.delete, "/v1/sessions/\(intruderID)", bearer: intruder.sessionJWT).status
                    == .noContent)
            #expect(try await client.send(.get, "/v1/me", bearer: owner.sessionToken).status == .ok)
        }
    }

    @Test("Admin device listings mark the devices of sessions that did not prove their user")
    func verifiedSessionMark() async throws {
        try await TestEnvironment.withApp { environment, client in
            try await allowUnverified(client)
            let unverified = try await client.identify(userID: "carol")
            let verified = try await client.identify(sub: "dave")
            for (session, token) in [(unverified, "carol-phone"), (verified, "dave-phone")] {
                let reply = try await client.send(
                    .post, "/v1/devices", bearer: session.sessionToken,
                    body: #"{"platform":"apns","token":"\#(token)"}"#)
                #expect(reply.status == .created)
            }
            for (session, expected) in [(unverified, false), (verified, true)] {
                let devices = try #require(try await client.adminList("devices", of: session.profileID))
                #expect(devices.count == 1)
                #expect(devices.first?["verified_session"] as? Bool == expected)
            }
        }
    }

    @Test("The session JWT always carries its kind; a backend can accept verified sessions only")
    func kindClaim() async throws {
        try await TestEnvironment.withApp { environment, client in
            try await allowUnverified(client)
            let anonymous = try await client.anonymous()
            let unverified = try await client.identify(userID: "erin")
            let verified = try await client.identify(sub: "erin")
            let jwks = try JSONWebKeySet(
                json: try await client.send(.get, "/v1/projects/\(environment.project.project.id)/jwks.json").body)
            let verifier = try SessionJWTVerifier(
                jwks: jwks, audience: environment.project.project.id, allowedKinds: [.verified])
            for (reply, kind) in [(anonymous, "anonymous"), (unverified, "unverified"), (verified, "verified")] {
                let jwt = try #require(reply.sessionJWT)
                let payload = try #require(Base64URL.decode(jwt.split(separator: ".")[1]))
                #expect(String(decoding: payload, as: UTF8.self).contains(#""kind":"\#(kind)""#))
                if kind == "verified" {
                    #expect(try verifier.verify(jwt, now: environment.clock.now).externalID == "erin")
                } else {
                    let error = #expect(throws: TokenError.self) {
                        try verifier.verify(jwt, now: environment.clock.now)
                    }
                    #expect(error?.code == .sessionKindNotAllowed)
                }
            }
        }
    }

    // MARK: 3. An unverified profile upgrades

    @Test("A signed token for the same user from an unverified session merges; no 409")
    func unverifiedUpgrades() async throws {
        try await TestEnvironment.withApp { environment, client in
            try await allowUnverified(client)
            // No verified profile yet: one is created and the unverified one folded into it.
            let asserted = try await client.identify(userID: "frank")
            let upgraded = try await client.identify(sub: "frank", bearer: asserted.sessionToken)
            #expect(upgraded.status == .ok)
            #expect(upgraded["merge"]["outcome"] as? String == "merged")
            #expect(upgraded["merge"]["from_profile_id"] as? String == asserted.profileID)
            #expect(upgraded["profile"]["verified"] as? Bool == true)
            #expect(upgraded["capabilities"]["kind"] as? String == "verified")
            #expect(upgraded.profileID != asserted.profileID)
            let alias = try await client.admin(.get, "/v1/admin/profiles/\(try #require(asserted.profileID))")
            #expect(alias.profileID == upgraded.profileID)
            #expect(try await client.send(.get, "/v1/me", bearer: asserted.sessionToken).status == .unauthorized)
            // A verified profile exists: the next unverified one merges into it.
            let again = try await client.identify(userID: "frank")
            let merged = try await client.identify(sub: "frank", bearer: again.sessionJWT)
            #expect(merged["merge"]["outcome"] as? String == "merged")
            #expect(merged["merge"]["from_profile_id"] as? String == again.profileID)
            #expect(merged.profileID == upgraded.profileID)
            // Another user's token is still refused.
            let other = try await client.identify(userID: "frank")
            let refused = try await client.identify(sub: "grace", bearer: other.sessionToken)
            #expect(refused.status == .conflict)
            #expect(refused.errorCode == "external_user_id_changed")
        }
    }

    // MARK: 4 and 5. Extension needs the session token, and says when it was capped

    @Test("Extending with a session JWT is 403 session_token_required; checking with it still works")
    func extensionNeedsToken() async throws {
        try await TestEnvironment.withApp { environment, client in
            let start = try await client.anonymous()
            let jwt = try #require(start.sessionJWT)
            let refused = try await client.send(
                .post, "/v1/sessions/authenticate", bearer: jwt, body: #"{"session_duration_minutes":60}"#)
            #expect(refused.status == .forbidden)
            #expect(refused.errorCode == "session_token_required")
            environment.clock.advance(seconds: 3600)
            let expired = try await client.send(
                .post, "/v1/sessions/authenticate", bearer: jwt, body: #"{"session_duration_minutes":525600}"#)
            #expect(expired.errorCode == "session_token_required")
            let check = try await client.send(.post, "/v1/sessions/authenticate", bearer: jwt)
            #expect(check.status == .ok)
            #expect(check["session"]["expires_at"] as? String == start["session"]["expires_at"] as? String)
            let extended = try await client.send(
                .post, "/v1/sessions/authenticate", bearer: start.sessionToken,
                body: #"{"session_duration_minutes":60}"#)
            #expect(extended.status == .ok)
        }
    }

    @Test("A duration above the project's maximum is capped and says so: extension_capped")
    func extensionCapped() async throws {
        try await TestEnvironment.withApp { environment, client in
            let session = try await client.identify(sub: "heidi")
            let token = try #require(session.sessionToken)
            let now = environment.clock.seconds
            let capped = try await client.send(
                .post, "/v1/sessions/authenticate", bearer: token, body: #"{"session_duration_minutes":525600}"#)
            #expect(capped.json["extension_capped"] as? Bool == true)
            #expect(capped["session"]["expires_at"] as? String == RFC3339.string(now + 43_200 * 60))
            let within = try await client.send(
                .post, "/v1/sessions/authenticate", bearer: token, body: #"{"session_duration_minutes":60}"#)
            #expect(within.json["extension_capped"] as? Bool == false)
            let heartbeat = try await client.send(.post, "/v1/sessions/authenticate", bearer: token)
            #expect(heartbeat.json["extension_capped"] == nil)
            let started = try await client.send(
                .post, "/v1/sessions/identify", bearer: client.publishableKey,
                body:
                    #"{"identity_token":"\#(environment.identityToken(sub: "ivan"))","session_duration_minutes":50000}"#
            )
            #expect(started.json["extension_capped"] as? Bool == true)
        }
    }

    // MARK: 6. No caching

    @Test("Every /v1 answer, errors included, is Cache-Control: no-store; the JWKS stays cacheable")
    func noStore() async throws {
        try await TestEnvironment.withApp(.live) { environment, client in
            let start = try await client.anonymous()
            let replies = [
                start,
                try await client.send(.get, "/v1/me", bearer: start.sessionToken),
                try await client.send(.get, "/v1/me"),
                try await client.send(.get, "/v1/me", bearer: "st_unknown"),
                try await client.send(.get, "/v1/nothing-here"),
                try await client.send(.put, "/v1/me", bearer: start.sessionToken),
                try await client.send(.post, "/v1/sessions/anonymous", bearer: client.publishableKey, body: "{"),
                try await client.admin(.get, "/v1/admin/project"),
                try await client.send(.get, "/v1/projects/prj_unknown/jwks.json"),
            ]
            for reply in replies {
                #expect(reply.headers[.cacheControl] == "no-store", "\(reply.status)")
            }
            let jwks = try await client.send(.get, "/v1/projects/\(environment.project.project.id)/jwks.json")
            #expect(jwks.status == .ok)
            #expect(jwks.headers[.cacheControl] == "no-store")
        }
    }
}
