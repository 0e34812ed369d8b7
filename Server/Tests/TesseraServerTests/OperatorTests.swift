import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// The operator's admin endpoints of issue 13: identity-secret usage, introspection, admin session
/// deletion, blocking, and the rotation of signing keys and API keys (on the selected backend).
@Suite("Admin API: rotation, blocking and introspection")
struct OperatorTests {
    private static func uncached(_ configuration: inout ServerConfiguration) {
        // Every request reads the project again, so the test clock alone decides what is published.
        configuration.projectCacheSeconds = 0
    }

    @Test("GET /v1/admin/identity-secrets lists kid, created_at and last_used_at, recorded at most once a minute")
    func identitySecrets() async throws {
        let environment = try await TestEnvironment.make()
        let other = try await environment.makeOtherProject()
        try await environment.withApp { client in
            let before = try await client.admin(.get, "/v1/admin/identity-secrets")
            #expect(before.status == .ok)
            let list = try #require(before.json["identity_secrets"] as? [[String: Any]])
            #expect(list.count == 1)
            #expect(list.first?["kid"] as? String == environment.project.identitySecret.kid)
            #expect(list.first?["last_used_at"] is NSNull)
            #expect(!String(decoding: before.body, as: UTF8.self).contains(environment.project.identitySecret.value))
            #expect(Set(list.first?.keys.map { $0 } ?? []) == ["kid", "created_at", "last_used_at"])

            let first = environment.clock.seconds
            #expect(try await client.identify(sub: "user-1").status == .ok)
            func lastUsed() async throws -> String? {
                let reply = try await client.admin(.get, "/v1/admin/identity-secrets")
                return (reply.json["identity_secrets"] as? [[String: Any]])?.first?["last_used_at"] as? String
            }
            #expect(try await lastUsed() == RFC3339.string(first))
            environment.clock.advance(seconds: 30)
            #expect(try await client.identify(sub: "user-1").status == .ok)
            #expect(try await lastUsed() == RFC3339.string(first), "written at most once a minute")
            environment.clock.advance(seconds: 31)
            #expect(try await client.identify(sub: "user-1").status == .ok)
            #expect(try await lastUsed() == RFC3339.string(environment.clock.seconds))

            let foreign = try await client.send(.get, "/v1/admin/identity-secrets", bearer: other.secretKey)
            let foreignList = foreign.json["identity_secrets"] as? [[String: Any]]
            #expect(foreignList?.map { $0["kid"] as? String } == [other.identitySecret.kid])
            #expect(
                try await client.send(.get, "/v1/admin/identity-secrets", bearer: client.publishableKey).errorCode
                    == "invalid_credentials")
        }
    }

    @Test("Introspection: active sessions of the key's project only; a bad body is 400")
    func introspect() async throws {
        let environment = try await TestEnvironment.make()
        let other = try await environment.makeOtherProject()
        try await environment.withApp { client in
            let user = try await client.identify(sub: "intro")
            let token = try #require(user.sessionToken)
            let jwt = try #require(user.sessionJWT)
            for body in [#"{"session_token":"\#(token)"}"#, #"{"session_jwt":"\#(jwt)"}"#] {
                let reply = try await client.admin(.post, "/v1/admin/sessions/introspect", body: body)
                #expect(reply.status == .ok)
                #expect(reply.json["active"] as? Bool == true)
                #expect(reply["session"]["id"] as? String == user.sessionID)
                #expect(reply["profile"]["external_id"] as? String == "intro")
                #expect(reply["profile"]["blocked"] as? Bool == false)
                #expect(reply["capabilities"]["kind"] as? String == "verified")
                let foreign = try await client.send(
                    .post, "/v1/admin/sessions/introspect", bearer: other.secretKey, body: body)
                #expect(foreign.status == .ok)
                #expect(foreign.json.count == 1 && foreign.json["active"] as? Bool == false)
            }
            for garbage in [
                #"{"session_token":"st_nope"}"#, #"{"session_jwt":"a.b.c"}"#, #"{"session_token":"pk_x"}"#,
                // Judged by the verifier, like an identity token: control characters are no credential.
                #"{"session_jwt":"\u0002a.b\u0080"}"#, #"{"session_token":"st_\u0000"}"#,
            ] {
                let reply = try await client.admin(.post, "/v1/admin/sessions/introspect", body: garbage)
                #expect(reply.status == .ok && reply.json["active"] as? Bool == false)
            }
            for bad in [
                "{}", #"{"session_token":"\#(token)","session_jwt":"\#(jwt)"}"#, #"{"session_token":5}"#, "[]",
                "nope",
            ] {
                let reply = try await client.admin(.post, "/v1/admin/sessions/introspect", body: bad)
                #expect(reply.status == .badRequest, "\(bad)")
                #expect(reply.errorCode == "invalid_request")
            }
            // The JWT's own exp passed: inactive, although the session lives on.
            environment.clock.advance(seconds: 400)
            let stale = try await client.admin(
                .post, "/v1/admin/sessions/introspect", body: #"{"session_jwt":"\#(jwt)"}"#)
            #expect(stale.json["active"] as? Bool == false)
            _ = try await client.send(.post, "/v1/sessions/revoke", bearer: token)
            let revoked = try await client.admin(
                .post, "/v1/admin/sessions/introspect",
                body: #"{"session_token":"\#(token)"}"#)
            #expect(revoked.json["active"] as? Bool == false)
        }
    }

    @Test("DELETE /v1/admin/sessions/{id} ends a session of the key's project; 404 otherwise")
    func deleteSession() async throws {
        let environment = try await TestEnvironment.make()
        let other = try await environment.makeOtherProject()
        try await environment.withApp { client in
            let user = try await client.identify(sub: "del")
            let sessionID = try #require(user.sessionID)
            _ = try await client.registerDevice(bearer: user.sessionToken, platform: "apns", token: "d1")
            let foreign = try await client.send(.delete, "/v1/admin/sessions/\(sessionID)", bearer: other.secretKey)
            #expect(foreign.status == .notFound && foreign.errorCode == "not_found")
            #expect(try await client.send(.get, "/v1/me", bearer: user.sessionToken).status == .ok)
            let unknown = try await client.admin(.delete, "/v1/admin/sessions/ses_doesnotexist")
            #expect(unknown.status == .notFound)
            let deleted = try await client.admin(.delete, "/v1/admin/sessions/\(sessionID)")
            #expect(deleted.status == .noContent)
            #expect(try await client.send(.get, "/v1/me", bearer: user.sessionToken).errorCode == "session_revoked")
            #expect(try await client.send(.get, "/v1/me", bearer: user.sessionJWT).errorCode == "session_revoked")
            #expect(try await client.adminList("devices", of: user.profileID)?.isEmpty == true)
            let again = try await client.admin(.delete, "/v1/admin/sessions/\(sessionID)")
            #expect(again.status == .noContent, "idempotent for the project's own ended session")
        }
    }

    @Test("Blocking ends sessions and devices and refuses identify and anonymous restore until unblocked")
    func block() async throws {
        var settings = ProjectSettings()
        settings.allowUnverifiedIdentify = true
        try await TestEnvironment.withApp(settings: settings) { environment, client in
            let user = try await client.identify(sub: "blocky")
            let profileID = try #require(user.profileID)
            _ = try await client.registerDevice(bearer: user.sessionToken, platform: "fcm", token: "b1")
            let blocked = try await client.admin(
                .post, "/v1/admin/profiles/\(profileID)/block",
                body: #"{"reason":"chargeback fraud"}"#)
            #expect(blocked.status == .ok)
            #expect(blocked["profile"]["blocked"] as? Bool == true)
            #expect(try await client.send(.get, "/v1/me", bearer: user.sessionToken).errorCode == "session_revoked")
            #expect(try await client.adminList("devices", of: profileID)?.isEmpty == true)
            let fetched = try await client.admin(.get, "/v1/admin/profiles/\(profileID)")
            #expect(fetched["profile"]["blocked"] as? Bool == true)

            let again = try await client.identify(sub: "blocky")
            #expect(again.status == .forbidden)
            #expect(again.errorCode == "profile_blocked")
            let anonymous = try await client.anonymous()
            let merge = try await client.identify(sub: "blocky", bearer: anonymous.sessionToken)
            #expect(merge.errorCode == "profile_blocked")
            #expect(try await client.send(.get, "/v1/me", bearer: anonymous.sessionToken).status == .ok)
            #expect(try await client.adminList("sessions", of: profileID)?.isEmpty == true)

            // An unverified profile, and an anonymous installation, blocked the same way.
            let asserted = try await client.identify(userID: "claimed")
            let assertedID = try #require(asserted.profileID)
            _ = try await client.admin(.post, "/v1/admin/profiles/\(assertedID)/block")
            let assertedAgain = try await client.identify(userID: "claimed")
            #expect(assertedAgain.errorCode == "profile_blocked")
            let installation = UUID().uuidString.lowercased()
            let secret = OpaqueToken.installationSecret()
            let device = try await client.anonymous(installationID: installation, secret: secret)
            _ = try await client.admin(.post, "/v1/admin/profiles/\(device.profileID!)/block", body: "{}")
            let restore = try await client.anonymous(installationID: installation, secret: secret)
            #expect(restore.status == .forbidden && restore.errorCode == "profile_blocked")

            let unblocked = try await client.admin(.post, "/v1/admin/profiles/\(profileID)/unblock")
            #expect(unblocked.status == .ok && unblocked["profile"]["blocked"] as? Bool == false)
            let back = try await client.identify(sub: "blocky")
            #expect(back.status == .ok && back.profileID == profileID)

            let unknown = try await client.admin(.post, "/v1/admin/profiles/usr_nobody/block", body: #"{"reason":"x"}"#)
            #expect(unknown.status == .notFound)
            let badReason = try await client.admin(
                .post, "/v1/admin/profiles/\(profileID)/block", body: #"{"reason":5}"#)
            #expect(badReason.status == .badRequest)
        }
    }

    @Test("A block racing identifies is never undone: no session of the profile outlives the block")
    func blockRacingIdentify() async throws {
        try await TestEnvironment.withApp { environment, client in
            for round in 0..<5 {
                let sub = "race-\(round)"
                let first = try await client.identify(sub: sub)
                let profileID = try #require(first.profileID)
                let statuses = try await raceBlock(of: profileID, client) {
                    try await client.identify(sub: sub).status.code
                }
                #expect(Set(statuses).isSubset(of: [200, 403]))
                #expect(try await client.adminList("sessions", of: profileID)?.isEmpty == true, "round \(round)")
                #expect(
                    try await client.identify(sub: sub).errorCode
                        == "profile_blocked")
            }
        }
    }

    /// Six `attempt`s and a block of `profileID`, all at once: the status codes of the seven answers.
    func raceBlock(
        of profileID: String, _ client: APIClient, against attempt: @escaping @Sendable () async throws -> Int
    ) async throws -> [Int] {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<6 { group.addTask(operation: attempt) }
            group.addTask {
                try await client.admin(.post, "/v1/admin/profiles/\(profileID)/block").status
                    .code
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
    }

    @Test("A block racing anonymous restores is never undone either")
    func blockRacingRestore() async throws {
        try await TestEnvironment.withApp { environment, client in
            for round in 0..<5 {
                let installation = UUID().uuidString.lowercased()
                let secret = OpaqueToken.installationSecret()
                let first = try await client.anonymous(installationID: installation, secret: secret)
                let profileID = try #require(first.profileID)
                let statuses = try await raceBlock(of: profileID, client) {
                    try await client.anonymous(installationID: installation, secret: secret).status.code
                }
                #expect(Set(statuses).isSubset(of: [200, 403]))
                #expect(try await client.adminList("sessions", of: profileID)?.isEmpty == true, "round \(round)")
            }
        }
    }

    @Test("Signing-key rotation: the new key signs, the old stays in the JWKS until its JWTs expired")
    func signingKeys() async throws {
        try await TestEnvironment.withApp(configure: Self.uncached) { environment, client in
            let jwksPath = "/v1/projects/\(environment.project.project.id)/jwks.json"
            func kids() async throws -> [String] {
                let reply = try await client.send(.get, jwksPath)
                return (reply.json["keys"] as? [[String: Any]])?.compactMap { $0["kid"] as? String } ?? []
            }
            func kid(_ jwt: String?) throws -> String {
                let header = try #require(jwt?.split(separator: ".").first)
                let json = try JSONSerialization.jsonObject(with: Data(Base64URL.decode(String(header)) ?? []))
                return try #require((json as? [String: Any])?["kid"] as? String)
            }
            let user = try await client.identify(sub: "keys")
            let oldKid = try kid(user.sessionJWT)
            #expect(try await kids() == [oldKid])
            // Cached within this second before the rotation.
            let cached = try await client.send(.post, "/v1/sessions/authenticate", bearer: user.sessionToken)
            #expect(try kid(cached.sessionJWT) == oldKid)

            let rotated = try await client.admin(.post, "/v1/admin/signing-keys/rotate")
            #expect(rotated.status == .created)
            let newKid = try #require(rotated["signing_key"]["kid"] as? String)
            #expect(newKid != oldKid)
            #expect(!String(decoding: rotated.body, as: UTF8.self).contains("\"d\""))
            // Same second, same claims: the cached JWT of the old key is not served after the rotation.
            let after = try await client.send(.post, "/v1/sessions/authenticate", bearer: user.sessionToken)
            #expect(try kid(after.sessionJWT) == newKid)
            #expect(try await kids() == [newKid, oldKid])
            #expect(try await client.send(.get, "/v1/me", bearer: user.sessionJWT).status == .ok)
            #expect(try await client.send(.get, "/v1/me", bearer: after.sessionJWT).status == .ok)

            let listed = try await client.admin(.get, "/v1/admin/signing-keys")
            let keys = try #require(listed.json["signing_keys"] as? [[String: Any]])
            #expect(keys.map { $0["kid"] as? String } == [newKid, oldKid])
            #expect(keys.map { $0["status"] as? String } == ["current", "retired"])
            #expect(keys.allSatisfy { $0["d"] == nil && $0["private_key"] == nil })

            // 5 minutes of JWT life + 60 s leeway (+ the cache time, 0 here): then dropped from the JWKS.
            environment.clock.advance(seconds: 359)
            #expect(try await kids() == [newKid, oldKid])
            environment.clock.advance(seconds: 2)
            #expect(try await kids() == [newKid])
            let later = try await client.admin(.get, "/v1/admin/signing-keys")
            let statuses = (later.json["signing_keys"] as? [[String: Any]])?.map { $0["status"] as? String }
            #expect(statuses == ["current", "expired"])
        }
    }

    @Test("API-key rotation: the new key works at once, the old one until its grace period ends")
    func apiKeys() async throws {
        try await TestEnvironment.withApp(configure: Self.uncached) { environment, client in
            let oldSecret = client.secretKey
            let rotated = try await client.send(
                .post, "/v1/admin/api-keys/rotate", bearer: oldSecret, body: #"{"kind":"secret","grace_seconds":60}"#)
            #expect(rotated.status == .created)
            let newSecret = try #require(rotated["api_key"]["key"] as? String)
            #expect(newSecret.hasPrefix("sk_") && newSecret != oldSecret)
            #expect(rotated["api_key"]["kind"] as? String == "secret")
            #expect(try await client.send(.get, "/v1/admin/project", bearer: newSecret).status == .ok)
            #expect(try await client.send(.get, "/v1/admin/project", bearer: oldSecret).status == .ok)
            environment.clock.advance(seconds: 59)
            #expect(try await client.send(.get, "/v1/admin/project", bearer: oldSecret).status == .ok)
            environment.clock.advance(seconds: 1)
            let expired = try await client.send(.get, "/v1/admin/project", bearer: oldSecret)
            #expect(expired.status == .unauthorized && expired.errorCode == "invalid_api_key")
            #expect(try await client.send(.get, "/v1/admin/project", bearer: newSecret).status == .ok)

            // The publishable key, default grace (24 h), then one with none.
            let pk = try await client.send(
                .post, "/v1/admin/api-keys/rotate", bearer: newSecret, body: #"{"kind":"publishable"}"#)
            let newPublishable = try #require(pk["api_key"]["key"] as? String)
            #expect(newPublishable.hasPrefix("pk_"))
            #expect(
                pk["api_key"]["previous_key_expires_at"] as? String
                    == RFC3339.string(environment.clock.seconds + 86_400))
            #expect(try await client.anonymous().status == .created, "the old publishable key in its grace")
            let now = try await client.send(
                .post, "/v1/admin/api-keys/rotate", bearer: newSecret,
                body: #"{"kind":"publishable","grace_seconds":0}"#)
            let newest = try #require(now["api_key"]["key"] as? String)
            // Keys rotated out earlier keep their own grace; the one replaced with grace 0 stops at once.
            let rejected = try await client.send(
                .post, "/v1/sessions/anonymous", bearer: newPublishable,
                body:
                    #"{"installation_id":"\#(UUID().uuidString.lowercased())","installation_secret":"\#(OpaqueToken.installationSecret())"}"#
            )
            #expect(rejected.errorCode == "invalid_api_key")
            let accepted = try await client.send(
                .post, "/v1/sessions/anonymous", bearer: newest,
                body:
                    #"{"installation_id":"\#(UUID().uuidString.lowercased())","installation_secret":"\#(OpaqueToken.installationSecret())"}"#
            )
            #expect(accepted.status == .created)

            for bad in [
                #"{"kind":"other"}"#, #"{"kind":"secret","grace_seconds":-1}"#,
                #"{"kind":"secret","grace_seconds":2592001}"#, "{}", #"{"kind":"secret","grace_seconds":"1"}"#,
            ] {
                let reply = try await client.send(.post, "/v1/admin/api-keys/rotate", bearer: newSecret, body: bad)
                #expect(reply.status == .badRequest, "\(bad)")
            }
            #expect(try await client.send(.get, "/v1/admin/project", bearer: newSecret).status == .ok)
        }
    }

    @Test("Another node's cache sees an API-key rotation, and honours the grace period")
    func apiKeyRotationOnAnotherNode() async throws {
        let environment = try await TestEnvironment.make()
        let clock = environment.clock
        let nodeB = ProjectCache(
            store: environment.store, timeToLiveSeconds: 0, retiredKeyWindow: 365, now: { clock.seconds })
        let old = environment.project.secretKey
        #expect(try await nodeB.runtime(secretKey: old)?.id == environment.project.project.id)
        let newKey = OpaqueToken.secretKey()
        let rotated = try await environment.store.rotateAPIKey(
            projectID: environment.project.project.id, kind: .secret, newKeyHash: OpaqueToken.sha256(newKey),
            graceUntil: clock.seconds + 10, now: clock.seconds)
        #expect(rotated)
        #expect(try await nodeB.runtime(secretKey: newKey)?.id == environment.project.project.id)
        #expect(try await nodeB.runtime(secretKey: old) != nil)
        #expect(try await nodeB.runtime(publishableKey: old) == nil, "a key answers only for its own kind")
        clock.advance(seconds: 10)
        #expect(try await nodeB.runtime(secretKey: old) == nil)
        #expect(try await nodeB.runtime(secretKey: newKey) != nil)
    }

    @Test("Retention never deletes a blocked anonymous profile (its installation would start afresh)")
    func retentionKeepsBlocked() async throws {
        try await TestEnvironment.withApp { environment, client in
            let installation = UUID().uuidString.lowercased()
            let secret = OpaqueToken.installationSecret()
            let started = try await client.anonymous(installationID: installation, secret: secret)
            let profileID = try #require(started.profileID)
            _ = try await client.admin(.post, "/v1/admin/profiles/\(profileID)/block")
            environment.clock.advance(seconds: 10)
            _ = try await environment.store.deleteStale(
                now: environment.clock.seconds, anonymousCreatedBefore: environment.clock.seconds, batchSize: 100)
            let restore = try await client.anonymous(installationID: installation, secret: secret)
            #expect(restore.errorCode == "profile_blocked")
        }
    }
}
