import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

@Suite("POST /v1/sessions/identify")
struct IdentifyTests {
    @Test("With the publishable key: creates a verified profile from the claims; again: signs in to it")
    func publishableKey() async throws {
        try await TestEnvironment.withApp { environment, client in
            let token = environment.identityToken(
                sub: "user-42", name: "Ada", email: "ada@example.com", avatarURL: "https://example.com/a.png")
            let first = try await client.identify(token: token)
            #expect(first.status == .ok)
            #expect(first["profile"]["kind"] as? String == "identified")
            #expect(first["profile"]["external_id"] as? String == "user-42")
            #expect(first["profile"]["verified"] as? Bool == true)
            #expect(first["profile"]["name"] as? String == "Ada")
            #expect(first["profile"]["email"] as? String == "ada@example.com")
            #expect(first["profile"]["avatar_url"] as? String == "https://example.com/a.png")
            #expect(first["capabilities"]["authenticated"] as? Bool == true)
            #expect(first["capabilities"]["kind"] as? String == "verified")
            #expect(first.json["merge"] is NSNull)
            #expect(first["session"]["installation_id"] is NSNull)
            let claims = try SessionClaims.unverified(from: try #require(first.sessionJWT))
            #expect(claims.kind == "verified")
            #expect(claims.externalID == "user-42")
            let second = try await client.identify(sub: "user-42")
            #expect(second.profileID == first.profileID)
            #expect(second["profile"]["name"] as? String == "Ada")
        }
    }

    @Test("An anonymous caller with a new sub is promoted; the calling session ends")
    func promoted() async throws {
        try await TestEnvironment.withApp { environment, client in
            let installationID = UUID().uuidString.lowercased()
            let anonymous = try await client.anonymous(installationID: installationID)
            let token = try #require(anonymous.sessionToken)
            let reply = try await client.identify(sub: "new-user", bearer: token)
            #expect(reply.status == .ok)
            #expect(reply.profileID == anonymous.profileID)
            #expect(reply["merge"]["outcome"] as? String == "promoted")
            #expect(reply["merge"]["from_profile_id"] as? String == anonymous.profileID)
            #expect(reply.sessionToken != token)
            #expect(reply.sessionID != anonymous.sessionID)
            #expect(reply["session"]["installation_id"] as? String == installationID)
            let old = try await client.send(.get, "/v1/me", bearer: token)
            #expect(old.errorCode == "session_revoked")
            let oldJWT = try await client.send(.get, "/v1/me", bearer: anonymous.sessionJWT)
            #expect(oldJWT.errorCode == "session_revoked")
        }
    }

    @Test("An anonymous caller with a known sub is merged, and the anonymous ID stays an alias")
    func merged() async throws {
        try await TestEnvironment.withApp { environment, client in
            let existing = try await client.identify(sub: "known")
            let anonymous = try await client.anonymous()
            let reply = try await client.identify(sub: "known", bearer: anonymous.sessionToken)
            #expect(reply["merge"]["outcome"] as? String == "merged")
            #expect(reply["merge"]["from_profile_id"] as? String == anonymous.profileID)
            #expect(reply.profileID == existing.profileID)
            let alias = try await client.admin(.get, "/v1/admin/profiles/\(try #require(anonymous.profileID))")
            #expect(alias.status == .ok)
            #expect(alias["profile"]["id"] as? String == existing.profileID)
            let old = try await client.send(.get, "/v1/me", bearer: anonymous.sessionToken)
            #expect(old.status == .unauthorized)
        }
    }

    @Test("The same user identifying again is unchanged, with a new session")
    func unchanged() async throws {
        try await TestEnvironment.withApp { environment, client in
            let first = try await client.identify(sub: "same")
            let again = try await client.identify(sub: "same", bearer: first.sessionToken)
            #expect(again.status == .ok)
            #expect(again["merge"]["outcome"] as? String == "unchanged")
            #expect(again.profileID == first.profileID)
            #expect(again.sessionID != first.sessionID)
            #expect(try await client.send(.get, "/v1/me", bearer: first.sessionToken).errorCode == "session_revoked")
        }
    }

    @Test("A session of another identified user gets 409 external_user_id_changed and keeps its session")
    func anotherUser() async throws {
        try await TestEnvironment.withApp { environment, client in
            let alice = try await client.identify(sub: "alice")
            let reply = try await client.identify(sub: "bob", bearer: alice.sessionToken)
            #expect(reply.status == .conflict)
            #expect(reply.errorCode == "external_user_id_changed")
            #expect(try await client.send(.get, "/v1/me", bearer: alice.sessionToken).status == .ok)
        }
    }

    @Test("A jti is single-use: the second use is 401 identity_token_replayed")
    func replay() async throws {
        try await TestEnvironment.withApp { environment, client in
            let token = environment.identityToken(sub: "once", jti: "jti-1")
            #expect(try await client.identify(token: token).status == .ok)
            let again = try await client.identify(token: token)
            #expect(again.status == .unauthorized)
            #expect(again.errorCode == "identity_token_replayed")
        }
    }

    @Test("A failed identify does not burn the jti")
    func failedIdentifyKeepsJTI() async throws {
        try await TestEnvironment.withApp { environment, client in
            let alice = try await client.identify(sub: "alice")
            let token = environment.identityToken(sub: "bob", jti: "jti-bob")
            #expect(try await client.identify(token: token, bearer: alice.sessionToken).status == .conflict)
            #expect(try await client.identify(token: token).status == .ok)
        }
    }

    @Test("Token failures carry the verifier's codes")
    func verificationCodes() async throws {
        try await TestEnvironment.withApp { environment, client in
            let other = IdentitySecret.generate()
            let forged = environment.identityToken(sub: "x", secret: other)
            let forgedReply = try await client.identify(token: forged)
            #expect(forgedReply.status == .unauthorized)
            #expect(["invalid_signature"].contains(forgedReply.errorCode ?? ""))
            let expired = environment.identityToken(sub: "x", lifetime: -3600)
            #expect(try await client.identify(token: expired).errorCode == "identity_token_expired")
            let tooLong = environment.identityToken(sub: "x", lifetime: 7200)
            #expect(try await client.identify(token: tooLong).errorCode == "identity_token_lifetime_too_long")
            let future = environment.identityToken(sub: "x", issuedAt: environment.clock.now.addingTimeInterval(600))
            #expect(try await client.identify(token: future).errorCode == "identity_token_not_yet_valid")
            let wrongAudience = environment.identityToken(sub: "x", audience: ["someone-else"])
            #expect(try await client.identify(token: wrongAudience).errorCode == "audience_mismatch")
            let badEmail = try await client.identify(token: environment.identityToken(sub: "x", email: "not an email"))
            #expect(badEmail.status == .badRequest)
            #expect(badEmail.errorCode == "invalid_email")
            let badAvatar = try await client.identify(
                token: environment.identityToken(sub: "x", avatarURL: "http://insecure.example.com/a.png"))
            #expect(badAvatar.status == .badRequest)
            #expect(badAvatar.errorCode == "invalid_avatar_url")
            let badName = try await client.identify(
                token: environment.identityToken(sub: "x", name: String(repeating: "n", count: 201)))
            #expect(badName.errorCode == "invalid_name")
            #expect(try await client.identify(token: "abc.def").errorCode == "invalid_identity_token")
            let rightAudience = environment.identityToken(sub: "x", audience: [environment.project.project.id])
            #expect(try await client.identify(token: rightAudience).status == .ok)
            let slugAudience = environment.identityToken(sub: "y", audience: [environment.project.project.slug])
            #expect(try await client.identify(token: slugAudience).status == .ok)
        }
    }

    @Test("The leeway comes from the project settings, judged by the injected clock")
    func leeway() async throws {
        try await TestEnvironment.withApp { environment, client in
            let token = environment.identityToken(sub: "late", lifetime: 10)
            environment.clock.advance(seconds: 65)
            #expect(try await client.identify(token: token).status == .ok)
            let later = environment.identityToken(sub: "later", lifetime: 10)
            environment.clock.advance(seconds: 75)
            let reply = try await client.identify(token: later)
            #expect(reply.errorCode == "identity_token_expired")
        }
    }

    @Test("A token signed for another project is invalid_signature: the project comes from the credential")
    func otherProject() async throws {
        let environment = try await TestEnvironment.make()
        let other = try await environment.makeOtherProject()
        try await environment.withApp { client in
            let token = environment.identityToken(sub: "x", secret: other.identitySecret)
            let reply = try await client.identify(token: token)
            #expect(reply.errorCode == "invalid_signature")
        }
    }

    @Test("user_id form: 403 unverified_identify_disabled unless the project allows it, then unverified")
    func unverified() async throws {
        try await TestEnvironment.withApp { environment, client in
            let denied = try await client.identify(userID: "u1")
            #expect(denied.status == .forbidden)
            #expect(denied.errorCode == "unverified_identify_disabled")
            let patch = try await client.allowUnverifiedIdentify()
            #expect(patch.status == .ok)
            let anonymous = try await client.anonymous()
            let allowed = try await client.identify(userID: "u1", bearer: anonymous.sessionToken)
            #expect(allowed.status == .ok)
            #expect(allowed["profile"]["verified"] as? Bool == false)
            #expect(allowed["profile"]["external_id"] as? String == "u1")
            #expect(allowed["capabilities"]["authenticated"] as? Bool == false)
            #expect(allowed["capabilities"]["kind"] as? String == "unverified")
            #expect(allowed["merge"]["outcome"] as? String == "promoted")
            let signed = try await client.identify(sub: "u1")
            #expect(signed.profileID != allowed.profileID)
        }
    }

    @Test("identify needs exactly one of identity_token and user_id; secret keys are refused")
    func bodyShape() async throws {
        try await TestEnvironment.withApp { environment, client in
            let none = try await client.send(.post, "/v1/sessions/identify", bearer: client.publishableKey, body: "{}")
            #expect(none.errorCode == "invalid_request")
            let both = try await client.send(
                .post, "/v1/sessions/identify", bearer: client.publishableKey,
                body: #"{"identity_token":"a.b.c","user_id":"x"}"#)
            #expect(both.errorCode == "invalid_request")
            let typed = try await client.send(
                .post, "/v1/sessions/identify", bearer: client.publishableKey, body: #"{"identity_token":5}"#)
            #expect(typed.errorCode == "invalid_request")
            let secret = try await client.identify(sub: "x", bearer: client.secretKey)
            #expect(secret.errorCode == "invalid_credentials")
        }
    }

    @Test("require_audience and expected_issuer settings are enforced")
    func settingsEnforced() async throws {
        try await TestEnvironment.withApp { environment, client in
            _ = try await client.admin(
                .patch, "/v1/admin/project",
                body: #"{"require_audience":true,"max_identity_token_lifetime_seconds":120}"#)
            #expect(
                try await client.identify(token: environment.identityToken(sub: "x", lifetime: 60)).errorCode
                    == "audience_mismatch")
            let withAudience = environment.identityToken(
                sub: "x", lifetime: 60, audience: [environment.project.project.id])
            #expect(try await client.identify(token: withAudience).status == .ok)
            let long = environment.identityToken(sub: "x", lifetime: 300, audience: [environment.project.project.id])
            #expect(try await client.identify(token: long).errorCode == "identity_token_lifetime_too_long")
        }
    }
}
