import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

@Suite("POST /v1/sessions/authenticate")
struct AuthenticateTests {
    @Test("Without a duration it only checks: same expiry, a fresh JWT, the same token echoed")
    func heartbeat() async throws {
        try await TestEnvironment.withApp { environment, client in
            let start = try await client.anonymous()
            environment.clock.advance(seconds: 120)
            let reply = try await client.send(.post, "/v1/sessions/authenticate", bearer: start.sessionToken)
            #expect(reply.status == .ok)
            #expect(reply.sessionToken == start.sessionToken)
            #expect(reply["session"]["expires_at"] as? String == start["session"]["expires_at"] as? String)
            #expect(
                reply["session"]["last_authenticated_at"] as? String == start["session"]["last_authenticated_at"]
                    as? String)
            #expect(reply.json["server_time"] as? String == RFC3339.string(environment.clock.seconds))
            let claims = try SessionClaims.unverified(from: try #require(reply.sessionJWT))
            #expect(claims.issuedAt == environment.clock.now)
        }
    }

    @Test("With a duration: expires_at = max(expires_at, now + duration)")
    func extend() async throws {
        try await TestEnvironment.withApp { environment, client in
            let start = try await client.anonymous()
            let token = try #require(start.sessionToken)
            let now = environment.clock.seconds
            let shorter = try await client.send(
                .post, "/v1/sessions/authenticate", bearer: token, body: #"{"session_duration_minutes":60}"#)
            #expect(shorter["session"]["expires_at"] as? String == RFC3339.string(now + 525_600 * 60))
            _ = try await client.admin(.patch, "/v1/admin/project", body: #"{"anonymous_session_minutes":525600}"#)
            let short = try await client.anonymous(minutes: 10)
            environment.clock.advance(seconds: 300)
            let extended = try await client.send(
                .post, "/v1/sessions/authenticate", bearer: short.sessionToken,
                body: #"{"session_duration_minutes":30}"#)
            #expect(extended["session"]["expires_at"] as? String == RFC3339.string(environment.clock.seconds + 1800))
            #expect(
                extended["session"]["last_authenticated_at"] as? String == RFC3339.string(environment.clock.seconds))
        }
    }

    @Test("Out-of-range durations are 400 invalid_session_duration")
    func badDurations() async throws {
        try await TestEnvironment.withApp { environment, client in
            let token = try #require(try await client.anonymous().sessionToken)
            for minutes in [0, 4, 525_601] {
                let reply = try await client.send(
                    .post, "/v1/sessions/authenticate", bearer: token,
                    body: #"{"session_duration_minutes":\#(minutes)}"#)
                #expect(reply.errorCode == "invalid_session_duration")
            }
            let typed = try await client.send(
                .post, "/v1/sessions/authenticate", bearer: token, body: #"{"session_duration_minutes":"60"}"#)
            #expect(typed.errorCode == "invalid_request")
        }
    }

    @Test("Expired sessions are 401 session_expired; revoked ones session_revoked")
    func notAlive() async throws {
        try await TestEnvironment.withApp { environment, client in
            let start = try await client.anonymous(minutes: 5)
            environment.clock.advance(seconds: 299)
            #expect(try await client.send(.post, "/v1/sessions/authenticate", bearer: start.sessionToken).status == .ok)
            environment.clock.advance(seconds: 1)
            let expired = try await client.send(.post, "/v1/sessions/authenticate", bearer: start.sessionToken)
            #expect(expired.status == .unauthorized)
            #expect(expired.errorCode == "session_expired")
            let extend = try await client.send(
                .post, "/v1/sessions/authenticate", bearer: start.sessionToken,
                body: #"{"session_duration_minutes":60}"#)
            #expect(extend.errorCode == "session_expired")

            let other = try await client.anonymous()
            #expect(
                try await client.send(.post, "/v1/sessions/revoke", bearer: other.sessionToken).status == .noContent)
            let revoked = try await client.send(.post, "/v1/sessions/authenticate", bearer: other.sessionToken)
            #expect(revoked.errorCode == "session_revoked")
        }
    }

    @Test("A session JWT authenticates; an expired one with a good signature is accepted only here")
    func sessionJWT() async throws {
        try await TestEnvironment.withApp { environment, client in
            let start = try await client.anonymous()
            let jwt = try #require(start.sessionJWT)
            #expect(try await client.send(.get, "/v1/me", bearer: jwt).status == .ok)
            environment.clock.advance(seconds: 3600)
            let me = try await client.send(.get, "/v1/me", bearer: jwt)
            #expect(me.status == .unauthorized)
            #expect(me.errorCode == "invalid_credentials")
            let reply = try await client.send(.post, "/v1/sessions/authenticate", bearer: jwt)
            #expect(reply.status == .ok)
            #expect(reply.json["session_token"] is NSNull)
            let fresh = try #require(reply.sessionJWT)
            #expect(try await client.send(.get, "/v1/me", bearer: fresh).status == .ok)
        }
    }

    @Test("A tampered or foreign session JWT is 401 invalid_credentials")
    func tamperedJWT() async throws {
        let environment = try await TestEnvironment.make()
        let otherProject = try await environment.makeOtherProject()
        try await environment.withApp { client in
            let start = try await client.anonymous()
            let jwt = try #require(start.sessionJWT)
            var parts = jwt.split(separator: ".").map(String.init)
            parts[2] = String(parts[2].reversed())
            let tampered = try await client.send(
                .post, "/v1/sessions/authenticate", bearer: parts.joined(separator: "."))
            #expect(tampered.errorCode == "invalid_credentials")
            // A JWT signed by another key for this session's claims.
            let claims = try SessionClaims.unverified(from: jwt)
            let foreignKey = SessionSigningKey.generate()
            let ring = try SessionKeyRing(signingKey: foreignKey)
            let forged = ring.sign(claims)
            #expect(
                try await client.send(.post, "/v1/sessions/authenticate", bearer: forged).errorCode
                    == "invalid_credentials")
            var crossProject = claims
            crossProject.audience = otherProject.project.id
            let signedForOther = ring.sign(crossProject)
            #expect(
                try await client.send(.post, "/v1/sessions/authenticate", bearer: signedForOther).errorCode
                    == "invalid_credentials")
        }
    }

    @Test("Revoking makes the session's JWT useless at once")
    func revokeKillsJWT() async throws {
        try await TestEnvironment.withApp { environment, client in
            let start = try await client.anonymous()
            #expect(try await client.send(.post, "/v1/sessions/revoke", bearer: start.sessionJWT).status == .noContent)
            let reply = try await client.send(.get, "/v1/me", bearer: start.sessionJWT)
            #expect(reply.errorCode == "session_revoked")
        }
    }
}
