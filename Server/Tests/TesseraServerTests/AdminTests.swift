import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

@Suite("Admin API")
struct AdminTests {
    @Test("Profiles by ID and by external_id; another project's profile is a plain 404")
    func profiles() async throws {
        let environment = try await TestEnvironment.make()
        let other = try await environment.makeOtherProject()
        try await environment.withApp { client in
            let user = try await client.identify(token: environment.identityToken(sub: "ext-1", name: "One"))
            let profileID = try #require(user.profileID)
            let byID = try await client.admin(.get, "/v1/admin/profiles/\(profileID)")
            #expect(byID.status == .ok)
            #expect(byID["profile"]["external_id"] as? String == "ext-1")
            let byExternal = try await client.admin(.get, "/v1/admin/profiles?external_id=ext-1")
            #expect((byExternal.json["profiles"] as? [[String: Any]])?.first?["id"] as? String == profileID)
            let none = try await client.admin(.get, "/v1/admin/profiles?external_id=nobody")
            #expect((none.json["profiles"] as? [Any])?.isEmpty == true)
            let unfiltered = try await client.admin(.get, "/v1/admin/profiles")
            #expect(
                (unfiltered.json["profiles"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [profileID])
            #expect(unfiltered.json["next_cursor"] is NSNull)
            for path in [
                "/v1/admin/profiles/\(profileID)", "/v1/admin/profiles/\(profileID)/sessions",
                "/v1/admin/profiles/\(profileID)/devices",
            ] {
                let foreign = try await client.send(.get, path, bearer: other.secretKey)
                #expect(foreign.status == .notFound)
                #expect(foreign.errorCode == "not_found")
            }
            let foreignRevoke = try await client.send(
                .post, "/v1/admin/profiles/\(profileID)/sessions/revoke", bearer: other.secretKey)
            #expect(foreignRevoke.status == .notFound)
            #expect(
                try await client.send(.delete, "/v1/admin/profiles/\(profileID)", bearer: other.secretKey).status
                    == .notFound)
            let foreignSearch = try await client.send(
                .get, "/v1/admin/profiles?external_id=ext-1", bearer: other.secretKey)
            #expect((foreignSearch.json["profiles"] as? [Any])?.isEmpty == true)
            #expect(try await client.send(.get, "/v1/me", bearer: user.sessionToken).status == .ok)
        }
    }

    @Test("Admin sessions: list and revoke all (devices go too)")
    func sessions() async throws {
        try await TestEnvironment.withApp { environment, client in
            let one = try await client.identify(sub: "multi")
            let two = try await client.identify(sub: "multi")
            let profileID = try #require(one.profileID)
            _ = try await client.registerDevice(bearer: two.sessionToken, platform: "apns", token: "p")
            let list = try await client.admin(.get, "/v1/admin/profiles/\(profileID)/sessions")
            #expect((list.json["sessions"] as? [Any])?.count == 2)
            let revoke = try await client.admin(.post, "/v1/admin/profiles/\(profileID)/sessions/revoke")
            #expect(revoke.status == .noContent)
            #expect(try await client.send(.get, "/v1/me", bearer: one.sessionToken).errorCode == "session_revoked")
            #expect(try await client.send(.get, "/v1/me", bearer: two.sessionJWT).errorCode == "session_revoked")
            #expect(try await client.adminList("devices", of: profileID)?.isEmpty == true)
            #expect(try await client.adminList("sessions", of: profileID)?.isEmpty == true)
        }
    }

    @Test("DELETE a profile erases it, its aliases, sessions and devices")
    func erase() async throws {
        try await TestEnvironment.withApp { environment, client in
            let existing = try await client.identify(sub: "erase-me")
            let anonymous = try await client.anonymous()
            let merged = try await client.identify(sub: "erase-me", bearer: anonymous.sessionToken)
            _ = try await client.registerDevice(bearer: merged.sessionToken, platform: "apns", token: "e")
            let profileID = try #require(existing.profileID)
            #expect(try await client.admin(.delete, "/v1/admin/profiles/\(profileID)").status == .noContent)
            #expect(try await client.admin(.get, "/v1/admin/profiles/\(profileID)").status == .notFound)
            let alias = try #require(anonymous.profileID)
            #expect(try await client.admin(.get, "/v1/admin/profiles/\(alias)").status == .notFound)
            #expect(try await client.send(.get, "/v1/me", bearer: merged.sessionToken).errorCode == "session_not_found")
            #expect(try await client.admin(.delete, "/v1/admin/profiles/\(profileID)").status == .notFound)
            let again = try await client.identify(sub: "erase-me")
            #expect(again.profileID != profileID)
        }
    }

    @Test("GET and PATCH /v1/admin/project: settings validated, unknown members rejected")
    func project() async throws {
        try await TestEnvironment.withApp { environment, client in
            let get = try await client.admin(.get, "/v1/admin/project")
            #expect(get.status == .ok)
            let project = get["project"]
            #expect(project["id"] as? String == environment.project.project.id)
            let settings = project["settings"] as? [String: Any] ?? [:]
            #expect(settings["allow_unverified_identify"] as? Bool == false)
            #expect(settings["max_identity_token_lifetime_seconds"] as? Int == 3600)
            #expect(settings["leeway_seconds"] as? Int == 60)
            #expect(
                (project["identity_secrets"] as? [[String: Any]])?.first?["kid"] as? String
                    == environment.project.identitySecret.kid)
            #expect((project["identity_secrets"] as? [[String: Any]])?.first?["secret"] == nil)
            let patch = try await client.admin(
                .patch, "/v1/admin/project",
                body: #"{"leeway_seconds":10,"identified_session_minutes":60,"expected_issuer":"https://backend"}"#)
            #expect(patch.status == .ok)
            let patched = patch["project"]["settings"] as? [String: Any] ?? [:]
            #expect(patched["leeway_seconds"] as? Int == 10)
            #expect(patched["identified_session_minutes"] as? Int == 60)
            #expect(patched["expected_issuer"] as? String == "https://backend")
            for bad in [
                #"{"leeway_seconds":-1}"#, #"{"identified_session_minutes":4}"#, #"{"unknown":true}"#,
                #"{"allow_unverified_identify":"yes"}"#, #"{"max_identity_token_lifetime_seconds":0}"#, "[]",
                // PostgreSQL's text cannot hold a NUL: refused as input, never a 503.
                #"{"expected_issuer":"https://a\u0000b"}"#, #"{"expected_issuer":"line\nbreak"}"#,
                #"{"expected_issuer":""}"#,
            ] {
                let reply = try await client.admin(.patch, "/v1/admin/project", body: bad)
                #expect(reply.status == .badRequest, "\(bad)")
                #expect(reply.errorCode == "invalid_request")
            }
            let cleared = try await client.admin(.patch, "/v1/admin/project", body: #"{"expected_issuer":null}"#)
            #expect((cleared["project"]["settings"] as? [String: Any])?["expected_issuer"] is NSNull)
            let identified = try await client.identify(
                sub: "capped",
                extra: #","session_duration_minutes":600"#)
            #expect(identified["session"]["expires_at"] as? String == RFC3339.string(environment.clock.seconds + 3600))
        }
    }

    @Test("Identity secrets: create (shown once), at most 3, delete by kid; rotation keeps old tokens working")
    func identitySecrets() async throws {
        try await TestEnvironment.withApp { environment, client in
            let created = try await client.admin(.post, "/v1/admin/identity-secrets")
            #expect(created.status == .created)
            let kid = try #require(created["identity_secret"]["kid"] as? String)
            let value = try #require(created["identity_secret"]["secret"] as? String)
            let newSecret = try IdentitySecret(kid: kid, value: value)
            #expect(
                try await client.identify(token: environment.identityToken(sub: "new", secret: newSecret)).status == .ok
            )
            #expect(try await client.identify(sub: "old").status == .ok)
            #expect(try await client.admin(.post, "/v1/admin/identity-secrets").status == .created)
            let fourth = try await client.admin(.post, "/v1/admin/identity-secrets")
            #expect(fourth.status == .conflict)
            #expect(fourth.errorCode == "identity_secret_limit_reached")
            let deleted = try await client.send(
                .delete, "/v1/admin/identity-secrets/\(environment.project.identitySecret.kid)",
                bearer: client.secretKey)
            #expect(deleted.status == .noContent)
            #expect(
                try await client.identify(sub: "old").errorCode == "invalid_signature"
            )
            #expect(try await client.admin(.delete, "/v1/admin/identity-secrets/ik_nope").status == .notFound)
        }
    }

    @Test("The last identity secret cannot be deleted")
    func lastSecret() async throws {
        try await TestEnvironment.withApp { environment, client in
            let reply = try await client.send(
                .delete, "/v1/admin/identity-secrets/\(environment.project.identitySecret.kid)",
                bearer: client.secretKey)
            #expect(reply.status == .conflict)
            #expect(reply.errorCode == "last_identity_secret")
        }
    }

    @Test("JWKS lists the project's key; an unknown project is 404")
    func jwks() async throws {
        try await TestEnvironment.withApp { environment, client in
            let session = try await client.anonymous()
            let reply = try await client.send(.get, "/v1/projects/\(environment.project.project.id)/jwks.json")
            #expect(reply.status == .ok)
            let set = try JSONWebKeySet(json: reply.body)
            let verifier = try SessionJWTVerifier(
                jwks: set, issuer: "https://tessera.test", audience: environment.project.project.id)
            let claims = try verifier.verify(try #require(session.sessionJWT), now: environment.clock.now)
            #expect(claims.sessionID == session.sessionID)
            #expect(try await client.send(.get, "/v1/projects/prj_unknown/jwks.json").status == .notFound)
        }
    }

    @Test("A rotated session key stays in JWKS until its JWTs expire")
    func keyRotation() async throws {
        let environment = try await TestEnvironment.make { $0.projectCacheSeconds = 0 }
        try await environment.withApp { client in
            let projectID = environment.project.project.id
            let before = try JSONWebKeySet(
                json: try await client.send(.get, "/v1/projects/\(projectID)/jwks.json").body)
            let newKey = SessionSigningKey.generate()
            try await environment.store.rotateSessionKey(
                projectID: projectID,
                newKey: SessionKeyRecord(
                    kid: newKey.kid, privateKey: newKey.privateKeyRawRepresentation,
                    createdAt: environment.clock.seconds),
                now: environment.clock.seconds)
            let during = try JSONWebKeySet(
                json: try await client.send(.get, "/v1/projects/\(projectID)/jwks.json").body)
            #expect(during.keys.count == 2)
            #expect(during.keys.contains { $0.kid == before.keys[0].kid })
            environment.clock.advance(seconds: 361)
            let after = try JSONWebKeySet(json: try await client.send(.get, "/v1/projects/\(projectID)/jwks.json").body)
            #expect(after.keys.map(\.kid) == [newKey.kid])
        }
    }
}
