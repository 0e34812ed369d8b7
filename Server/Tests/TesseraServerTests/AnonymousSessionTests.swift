import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

@Suite("POST /v1/sessions/anonymous")
struct AnonymousSessionTests {
    @Test("A new installation gets 201 and a full session envelope")
    func newInstallation() async throws {
        try await TestEnvironment.withApp { environment, client in
            let installationID = UUID().uuidString.lowercased()
            let reply = try await client.anonymous(installationID: installationID)
            #expect(reply.status == .created)
            #expect(reply.sessionToken?.hasPrefix("st_") == true)
            #expect(reply.sessionID?.hasPrefix("ses_") == true)
            #expect(reply.profileID?.hasPrefix("usr_") == true)
            #expect(reply["profile"]["kind"] as? String == "anonymous")
            #expect(reply["profile"]["verified"] as? Bool == false)
            #expect(reply["profile"]["external_id"] is NSNull)
            #expect(reply["session"]["installation_id"] as? String == installationID)
            #expect(reply["capabilities"]["authenticated"] as? Bool == false)
            #expect(reply["capabilities"]["kind"] as? String == "anonymous")
            #expect(reply.json["server_time"] is String)
            let jwt = try #require(reply.sessionJWT)
            let claims = try SessionClaims.unverified(from: jwt)
            #expect(claims.sessionID == reply.sessionID)
            #expect(claims.subject == reply.profileID)
            #expect(claims.audience == environment.project.project.id)
            #expect(claims.issuer == "https://tessera.test")
            #expect(claims.kind == "anonymous")
            #expect(claims.expiration.timeIntervalSince(environment.clock.now) == 300)
        }
    }

    @Test("A known installation with its secret gets 200 and the same profile")
    func restore() async throws {
        try await TestEnvironment.withApp { environment, client in
            let (first, second) = try await client.anonymousTwice()
            #expect(first.status == .created)
            #expect(second.status == .ok)
            #expect(first.profileID == second.profileID)
            #expect(first.sessionID != second.sessionID)
        }
    }

    @Test("A known installation with another secret is 409 installation_conflict and changes nothing")
    func conflict() async throws {
        try await TestEnvironment.withApp { environment, client in
            let installationID = UUID().uuidString.lowercased()
            let owner = try await client.anonymous(installationID: installationID)
            let thief = try await client.anonymous(installationID: installationID)
            #expect(thief.status == .conflict)
            #expect(thief.errorCode == "installation_conflict")
            #expect(thief.sessionToken == nil)
            let sessions = try await client.send(.get, "/v1/sessions", bearer: owner.sessionToken)
            #expect((sessions.json["sessions"] as? [Any])?.count == 1)
        }
    }

    @Test(
        "Bad installation IDs and secrets are 400 invalid_request",
        arguments: [
            ("NOT-A-UUID", OpaqueToken.installationSecret()),
            (UUID().uuidString, OpaqueToken.installationSecret()),
            (UUID().uuidString.lowercased(), "short"),
            (UUID().uuidString.lowercased(), Base64URL.encode([UInt8](repeating: 1, count: 31))),
            (UUID().uuidString.lowercased(), OpaqueToken.installationSecret() + "="),
        ])
    func badInput(installationID: String, secret: String) async throws {
        try await TestEnvironment.withApp { environment, client in
            let reply = try await client.anonymous(installationID: installationID, secret: secret)
            #expect(reply.status == .badRequest)
            #expect(reply.errorCode == "invalid_request")
        }
    }

    @Test("session_duration_minutes: 5…525600, else 400 invalid_session_duration; capped by the project")
    func durations() async throws {
        var settings = ProjectSettings()
        settings.anonymousSessionMinutes = 60
        try await TestEnvironment.withApp(settings: settings) { environment, client in
            for bad in [0, 4, 525_601, -1] {
                let reply = try await client.anonymous(minutes: bad)
                #expect(reply.status == .badRequest)
                #expect(reply.errorCode == "invalid_session_duration")
            }
            let capped = try await client.anonymous(minutes: 600)
            #expect(capped["session"]["expires_at"] as? String == RFC3339.string(environment.clock.seconds + 3600))
            let short = try await client.anonymous(minutes: 10)
            #expect(short["session"]["expires_at"] as? String == RFC3339.string(environment.clock.seconds + 600))
        }
    }

    @Test("Only the SHA-256 of the session token and installation secret is stored")
    func hashesOnly() async throws {
        try await TestEnvironment.withApp { environment, client in
            let secret = OpaqueToken.installationSecret()
            let reply = try await client.anonymous(secret: secret)
            let token = try #require(reply.sessionToken)
            let store = try #require(environment.store as? SQLiteStore)
            let found = try store.readers.read { connection in
                try connection.query("SELECT token_hash FROM sessions").map { $0.blob(0) }
            }
            #expect(found == [OpaqueToken.sha256(token)])
            let installationHashes = try store.readers.read { connection in
                try connection.query("SELECT secret_hash FROM installations").map { $0.blob(0) }
            }
            #expect(installationHashes == [OpaqueToken.sha256(secret)])
        }
    }
}
