import Foundation
import HTTPTypes
import TesseraTokens
import Testing

@testable import TesseraServer

/// The user's devices (issue 27): revoke-others, `max_sessions_per_profile`, `profile.new_key` and
/// the key tier a client declares, on every backend.
@Suite("The user's devices: revoke-others, session limit, new keys, key tier")
struct SessionDevicesTests {
    typealias Device = SessionBindingTests.Device

    /// The feed's events of `types`, oldest first: `(type, data, actor type)`.
    static func events(_ client: APIClient, types: String) async throws -> [(
        type: String, data: [String: Any], actor: String?
    )] {
        let reply = try await client.admin(.get, "/v1/admin/events?types=\(types)&limit=200")
        #expect(reply.status == .ok)
        return (reply.json["events"] as? [[String: Any]] ?? []).map {
            (
                $0["type"] as? String ?? "", $0["data"] as? [String: Any] ?? [:],
                ($0["actor"] as? [String: Any])?["type"] as? String
            )
        }
    }

    /// A verified session of `sub` from the publishable key (a sign-in on a new device).
    static func signIn(_ client: APIClient, _ environment: TestEnvironment, sub: String) async throws -> Reply {
        let reply = try await client.identify(sub: sub)
        #expect(reply.status == .ok)
        return reply
    }

    @Test(
        "revoke-others ends every other live session of the profile, with devices and events",
        arguments: StoreBackend.allCases)
    func revokeOthers(backend: StoreBackend) async throws {
        try await TestEnvironment.withApp(backend: backend) { environment, client in
            let mine = try await Self.signIn(client, environment, sub: "ada")
            let second = try await Self.signIn(client, environment, sub: "ada")
            let third = try await Self.signIn(client, environment, sub: "ada")
            let stranger = try await Self.signIn(client, environment, sub: "grace")
            #expect(
                try await client.registerDevice(bearer: second.sessionToken, platform: "apns", token: "aa11").status
                    == .created)
            let answer = try await client.send(.post, "/v1/sessions/revoke-others", bearer: mine.sessionJWT)
            #expect(answer.status == .ok)
            #expect(answer.json["ended"] as? Int == 2)
            #expect(try await client.send(.get, "/v1/me", bearer: mine.sessionToken).status == .ok)
            for ended in [second, third] {
                let refused = try await client.send(.get, "/v1/me", bearer: ended.sessionToken)
                #expect(refused.errorCode == "session_revoked")
            }
            #expect(try await client.send(.get, "/v1/me", bearer: stranger.sessionToken).status == .ok)
            #expect(try await client.adminList("devices", of: mine.profileID)?.isEmpty == true)
            let events = try await Self.events(client, types: "session.ended,device.removed")
            #expect(events.map(\.type) == ["session.ended", "session.ended", "device.removed"])
            #expect(
                Set(events.prefix(2).compactMap { $0.data["session_id"] as? String })
                    == Set([second.sessionID, third.sessionID].compactMap { $0 }))
            #expect(events.prefix(2).allSatisfy { $0.data["reason"] as? String == "revoked" && $0.actor == "sdk" })
            // Nothing left to end; the caller's own session is never counted.
            let again = try await client.send(.post, "/v1/sessions/revoke-others", bearer: mine.sessionToken)
            #expect(again.json["ended"] as? Int == 0)
            // A session that ended is refused as on every session endpoint.
            #expect(try await client.send(.post, "/v1/sessions/revoke", bearer: mine.sessionToken).status == .noContent)
            let gone = try await client.send(.post, "/v1/sessions/revoke-others", bearer: mine.sessionToken)
            #expect(gone.status == .unauthorized && gone.errorCode == "session_revoked")
        }
    }

    @Test("revoke-others from an unverified session ends nothing", arguments: StoreBackend.allCases)
    func revokeOthersUnverified(backend: StoreBackend) async throws {
        try await TestEnvironment.withApp(backend: backend) { environment, client in
            try await client.allowUnverifiedIdentify()
            let first = try await client.identify(userID: "ada")
            let second = try await client.identify(userID: "ada")
            #expect(first.profileID == second.profileID)
            let answer = try await client.send(.post, "/v1/sessions/revoke-others", bearer: second.sessionToken)
            #expect(answer.status == .ok && answer.json["ended"] as? Int == 0)
            #expect(try await client.send(.get, "/v1/me", bearer: first.sessionToken).status == .ok)
        }
    }

    @Test(
        "revoke-others from a bound session needs its key's proof and spends its jti", arguments: StoreBackend.allCases)
    func revokeOthersBound(backend: StoreBackend) async throws {
        try await TestEnvironment.withApp(backend: backend) { environment, client in
            let device = Device(client: client)
            let token = try #require(try await device.start().sessionToken)
            let path = "/v1/sessions/revoke-others"
            let stolen = try await client.send(.post, path, bearer: token)
            #expect(stolen.status == .unauthorized && stolen.errorCode == "dpop_proof_required")
            let proof = try device.proof(.post, path, credential: token)
            let answer = try await device.send(.post, path, credential: token, proof: proof)
            #expect(answer.status == .ok && answer.json["ended"] as? Int == 0)
            let replayed = try await device.send(.post, path, credential: token, proof: proof)
            #expect(replayed.status == .unauthorized && replayed.errorCode == "dpop_proof_replayed")
        }
    }

    @Test(
        "max_sessions_per_profile: 1…1000 or null, typed 400 otherwise, in settings and project.updated",
        arguments: StoreBackend.allCases)
    func limitSetting(backend: StoreBackend) async throws {
        try await TestEnvironment.withApp(backend: backend) { environment, client in
            func settings(_ reply: Reply) -> [String: Any] { reply["project"]["settings"] as? [String: Any] ?? [:] }
            #expect(settings(try await client.admin(.get, "/v1/admin/project"))["max_sessions_per_profile"] is NSNull)
            for bad in ["0", "1001", "-1", "2.5", #""2""#, "true"] {
                let refused = try await client.admin(
                    .patch, "/v1/admin/project", body: #"{"max_sessions_per_profile":\#(bad)}"#)
                #expect(refused.status == .badRequest && refused.errorCode == "invalid_request", "\(bad)")
            }
            let set = try await client.admin(.patch, "/v1/admin/project", body: #"{"max_sessions_per_profile":3}"#)
            #expect(settings(set)["max_sessions_per_profile"] as? Int == 3)
            // Another setting's patch keeps it; null makes it unlimited again.
            let kept = try await client.admin(.patch, "/v1/admin/project", body: #"{"leeway_seconds":30}"#)
            #expect(settings(kept)["max_sessions_per_profile"] as? Int == 3)
            let cleared = try await client.admin(
                .patch, "/v1/admin/project", body: #"{"max_sessions_per_profile":null}"#)
            #expect(settings(cleared)["max_sessions_per_profile"] is NSNull)
            let changes = try await Self.events(client, types: "project.updated").map {
                $0.data["changed"] as? [String] ?? []
            }
            #expect(changes == [["max_sessions_per_profile"], ["leeway_seconds"], ["max_sessions_per_profile"]])
        }
    }

    @Test(
        "A new session beyond the limit ends the least recently authenticated (evicted)",
        arguments: StoreBackend.allCases)
    func eviction(backend: StoreBackend) async throws {
        try await TestEnvironment.withApp(backend: backend) { environment, client in
            try await client.admin(.patch, "/v1/admin/project", body: #"{"max_sessions_per_profile":2}"#)
            let first = try await Self.signIn(client, environment, sub: "ada")
            environment.clock.advance(seconds: 10)
            let second = try await Self.signIn(client, environment, sub: "ada")
            #expect(
                try await client.registerDevice(bearer: second.sessionToken, platform: "apns", token: "bb22").status
                    == .created)
            environment.clock.advance(seconds: 10)
            // An extension authenticates the first again: the second is now the least recent.
            #expect(
                try await client.send(
                    .post, "/v1/sessions/authenticate", bearer: first.sessionToken,
                    body: #"{"session_duration_minutes":60}"#
                ).status == .ok)
            environment.clock.advance(seconds: 10)
            let third = try await Self.signIn(client, environment, sub: "ada")
            #expect(try await client.send(.get, "/v1/me", bearer: second.sessionToken).errorCode == "session_revoked")
            for alive in [first, third] {
                #expect(try await client.send(.get, "/v1/me", bearer: alive.sessionToken).status == .ok)
            }
            #expect(try await client.adminList("sessions", of: first.profileID)?.count == 2)
            #expect(try await client.adminList("devices", of: first.profileID)?.isEmpty == true)
            let events = try await Self.events(client, types: "session.ended,device.removed,session.created")
            let tail = events.suffix(3).map(\.type)
            #expect(tail == ["session.ended", "device.removed", "session.created"], "ended before the new one")
            let ended = try #require(events.first { $0.type == "session.ended" })
            #expect(ended.data["session_id"] as? String == second.sessionID)
            #expect(ended.data["reason"] as? String == "evicted")
            // Another profile is not touched.
            #expect(try await Self.signIn(client, environment, sub: "grace").status == .ok)
            #expect(try await client.send(.get, "/v1/me", bearer: first.sessionToken).status == .ok)
        }
    }

    @Test(
        "An anonymous restore beyond the limit evicts the installation's older session",
        arguments: StoreBackend.allCases)
    func evictionAtAnonymousStart(backend: StoreBackend) async throws {
        try await TestEnvironment.withApp(backend: backend) { environment, client in
            try await client.admin(.patch, "/v1/admin/project", body: #"{"max_sessions_per_profile":1}"#)
            let (first, second) = try await client.anonymousTwice()
            #expect(first.status == .created && second.status == .ok)
            #expect(try await client.send(.get, "/v1/me", bearer: first.sessionToken).errorCode == "session_revoked")
            #expect(try await client.send(.get, "/v1/me", bearer: second.sessionToken).status == .ok)
            let ended = try await Self.events(client, types: "session.ended")
            #expect(ended.map { $0.data["reason"] as? String } == ["evicted"])
            #expect(ended.first?.data["session_id"] as? String == first.sessionID)
        }
    }

    @Test(
        "profile.new_key the first time a verified profile gets a session bound to a key",
        arguments: StoreBackend.allCases)
    func newKey(backend: StoreBackend) async throws {
        try await TestEnvironment.withApp(backend: backend) { environment, client in
            let phone = Device(client: client)
            let installationID = UUID().uuidString.lowercased()
            let anonymous = try await phone.start(installationID: installationID)
            let anonymousToken = try #require(anonymous.sessionToken)
            let body = #"{"identity_token":"\#(environment.identityToken(sub: "ada"))"}"#
            let identified = try await phone.send(
                .post, "/v1/sessions/identify", credential: anonymousToken, body: body)
            #expect(identified.status == .ok)
            // The same key again, from the publishable key: known, no event.
            let again = try await phone.send(
                .post, "/v1/sessions/identify", credential: client.publishableKey, scheme: "Bearer",
                body: #"{"identity_token":"\#(environment.identityToken(sub: "ada"))"}"#)
            #expect(again.status == .ok)
            // An unbound sign-in: no key, no event.
            #expect(try await Self.signIn(client, environment, sub: "ada").status == .ok)
            let laptop = Device(client: client)
            let other = try await laptop.send(
                .post, "/v1/sessions/identify", credential: client.publishableKey, scheme: "Bearer",
                body: #"{"identity_token":"\#(environment.identityToken(sub: "ada"))"}"#)
            #expect(other.status == .ok)
            let events = try await Self.events(client, types: "profile.new_key")
            #expect(events.count == 2)
            let first = try #require(events.first).data
            #expect(first["profile_id"] as? String == identified.profileID)
            #expect(first["session_id"] as? String == identified.sessionID)
            #expect(first["jkt"] as? String == phone.jkt)
            #expect(first["installation_id"] as? String == installationID)
            let second = try #require(events.last).data
            #expect(second["jkt"] as? String == laptop.jkt && second["session_id"] as? String == other.sessionID)
            #expect(second["installation_id"] is NSNull)
            // An unverified profile's keys are asserted by anyone with the publishable key: no event.
            try await client.allowUnverifiedIdentify()
            let unverified = try await laptop.send(
                .post, "/v1/sessions/identify", credential: client.publishableKey, scheme: "Bearer",
                body: #"{"user_id":"ada"}"#)
            #expect(unverified.status == .ok)
            #expect(try await Self.events(client, types: "profile.new_key").count == 2)
            // Erasure: the device key and the installation no longer tie the erased profile to a device.
            let profileID = try #require(identified.profileID)
            #expect(try await client.admin(.delete, "/v1/admin/profiles/\(profileID)").status == .noContent)
            let scrubbed = try await Self.events(client, types: "profile.new_key")
            #expect(scrubbed.count == 2, "erasure keeps the events")
            for event in scrubbed {
                #expect(event.data["profile_id"] as? String == profileID)
                #expect(event.data["jkt"] is NSNull && event.data["installation_id"] is NSNull)
            }
        }
    }

    @Test(
        "key_tier: kept with a bound session, shown in its binding and in introspection",
        arguments: StoreBackend.allCases)
    func keyTier(backend: StoreBackend) async throws {
        try await TestEnvironment.withApp(backend: backend) { environment, client in
            let device = Device(client: client)
            let started = try await device.send(
                .post, "/v1/sessions/anonymous", credential: client.publishableKey, scheme: "Bearer",
                body: #"""
                    {"installation_id":"\#(UUID().uuidString.lowercased())","installation_secret":"\#(OpaqueToken.installationSecret())","key_tier":"secure_enclave"}
                    """#)
            #expect(started.status == .created)
            let binding = started["session"]["binding"] as? [String: Any]
            #expect(binding?["jkt"] as? String == device.jkt)
            #expect(binding?["key_tier"] as? String == "secure_enclave")
            let token = try #require(started.sessionToken)
            let introspected = try await client.admin(
                .post, "/v1/admin/sessions/introspect", body: #"{"session_token":"\#(token)"}"#)
            #expect(introspected.json["active"] as? Bool == true)
            let shown = introspected["session"]["binding"] as? [String: Any]
            #expect(shown?["jkt"] as? String == device.jkt && shown?["key_tier"] as? String == "secure_enclave")
            let listed = try #require(try await client.adminList("sessions", of: started.profileID)?.first)
            #expect((listed["binding"] as? [String: Any])?["key_tier"] as? String == "secure_enclave")
            // Identify from it with another declared tier: the new session says what it was told.
            let identified = try await device.send(
                .post, "/v1/sessions/identify", credential: token,
                body: #"{"identity_token":"\#(environment.identityToken(sub: "ada"))","key_tier":"software"}"#)
            #expect((identified["session"]["binding"] as? [String: Any])?["key_tier"] as? String == "software")
            // Without a proof there is no binding, and nothing to keep a tier for.
            let unbound = try await client.send(
                .post, "/v1/sessions/anonymous", bearer: client.publishableKey,
                body: #"""
                    {"installation_id":"\#(UUID().uuidString.lowercased())","installation_secret":"\#(OpaqueToken.installationSecret())","key_tier":"software"}
                    """#)
            #expect(unbound.status == .created && unbound["session"]["binding"] is NSNull)
            let bad = try await client.send(
                .post, "/v1/sessions/anonymous", bearer: client.publishableKey,
                body: #"""
                    {"installation_id":"\#(UUID().uuidString.lowercased())","installation_secret":"\#(OpaqueToken.installationSecret())","key_tier":"tpm"}
                    """#)
            #expect(bad.status == .badRequest && bad.errorCode == "invalid_request")
            let badIdentify = try await client.identify(sub: "bob", extra: #","key_tier":7"#)
            #expect(badIdentify.status == .badRequest && badIdentify.errorCode == "invalid_request")
        }
    }
}
