import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

@Suite("Session JWTs shared within one second")
struct SessionJWTCacheTests {
    @Test("Two checks of a session in one second share the token; the next second signs anew")
    func sameSecond() async throws {
        try await TestEnvironment.withApp { environment, client in
            let start = try await client.anonymous()
            let token = try #require(start.sessionToken)
            environment.clock.advance(seconds: 5)
            let first = try await client.send(.post, "/v1/sessions/authenticate", bearer: token)
            let second = try await client.send(.post, "/v1/sessions/authenticate", bearer: token)
            let firstJWT = try #require(first.sessionJWT)
            #expect(second.sessionJWT == firstJWT)
            #expect(firstJWT != start.sessionJWT)
            environment.clock.advance(seconds: 1)
            let third = try await client.send(.post, "/v1/sessions/authenticate", bearer: token)
            let thirdJWT = try #require(third.sessionJWT)
            #expect(thirdJWT != firstJWT)
            let claims = try SessionClaims.unverified(from: thirdJWT)
            #expect(claims.issuedAt == environment.clock.now)
        }
    }

    @Test("Another session, or different claims, never gets a shared token")
    func keyedByClaims() throws {
        let cache = SessionJWTCache(capacity: 64)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func claims(session: String = "ses_a", externalID: String? = nil, expiry: Double = 300) -> SessionClaims {
            SessionClaims(
                issuer: "http://localhost", audience: "prj_1", subject: "usr_1", sessionID: session,
                expiration: now.addingTimeInterval(expiry), issuedAt: now, notBefore: now, kind: "anonymous",
                externalID: externalID)
        }
        cache.store("token-a", for: claims(), keyID: "k1")
        #expect(cache.token(for: claims(), keyID: "k1") == "token-a")
        #expect(cache.token(for: claims(), keyID: "k2") == nil)
        #expect(cache.token(for: claims(session: "ses_b"), keyID: "k1") == nil)
        #expect(cache.token(for: claims(externalID: "user-1"), keyID: "k1") == nil)
        #expect(cache.token(for: claims(expiry: 200), keyID: "k1") == nil)
        cache.remove(sessionID: "ses_a")
        #expect(cache.token(for: claims(), keyID: "k1") == nil)
    }

    @Test("A full cache stays bounded and keeps working")
    func bounded() throws {
        let cache = SessionJWTCache(capacity: 32)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for index in 0..<1_000 {
            let claims = SessionClaims(
                issuer: "i", audience: "a", subject: "s", sessionID: "ses_\(index)",
                expiration: now.addingTimeInterval(300), issuedAt: now, notBefore: now, kind: "anonymous",
                externalID: nil)
            cache.store("t\(index)", for: claims, keyID: "k")
            #expect(cache.token(for: claims, keyID: "k") == "t\(index)")
            #expect(cache.count <= 32)
        }
    }

    @Test("Realistic heartbeats (every session once, second after second) never grow the cache past its bound")
    func boundedAcrossSeconds() throws {
        // Real devices heartbeat every few minutes: each session comes once, and the seconds move on.
        // Nothing may be kept per session seen (the memory of a node serving 1,000,000 installations).
        let capacity = 256
        let cache = SessionJWTCache(capacity: capacity)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for index in 0..<20_000 {
            let now = start.addingTimeInterval(Double(index / 100))
            let claims = SessionClaims(
                issuer: "i", audience: "a", subject: "s", sessionID: "ses_\(index)",
                expiration: now.addingTimeInterval(300), issuedAt: now, notBefore: now, kind: "anonymous",
                externalID: nil)
            cache.store("t\(index)", for: claims, keyID: "k")
        }
        #expect(cache.count <= capacity)
        #expect(cache.count > 0)
    }

    @Test("Tokens of a past second are dropped when a new second arrives, and a late one is not kept")
    func pastSecondsDropped() throws {
        let cache = SessionJWTCache(capacity: 1_024)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        func claims(_ index: Int, at second: Date) -> SessionClaims {
            SessionClaims(
                issuer: "i", audience: "a", subject: "s", sessionID: "ses_\(index)",
                expiration: second.addingTimeInterval(300), issuedAt: second, notBefore: second, kind: "anonymous",
                externalID: nil)
        }
        for index in 0..<400 { cache.store("t\(index)", for: claims(index, at: start), keyID: "k") }
        #expect(cache.count == 400)
        let next = start.addingTimeInterval(1)
        for index in 400..<800 { cache.store("t\(index)", for: claims(index, at: next), keyID: "k") }
        // Every shard saw the new second: only its tokens are left.
        #expect(cache.count == 400)
        #expect(cache.token(for: claims(0, at: start), keyID: "k") == nil)
        #expect(cache.token(for: claims(600, at: next), keyID: "k") == "t600")
        // A token signed in the second before (a request that raced the turn of the second) is not kept.
        cache.store("late", for: claims(999, at: start), keyID: "k")
        #expect(cache.token(for: claims(999, at: start), keyID: "k") == nil)
        #expect(cache.count == 400)
    }

    @Test("A revoked session's shared token is refused: the session is checked first")
    func revokedFirst() async throws {
        try await TestEnvironment.withApp { environment, client in
            let start = try await client.anonymous()
            let token = try #require(start.sessionToken)
            let first = try await client.send(.post, "/v1/sessions/authenticate", bearer: token)
            #expect(first.status == .ok)
            let revoked = try await client.send(.post, "/v1/sessions/revoke", bearer: token)
            #expect(revoked.status == .noContent)
            let after = try await client.send(.post, "/v1/sessions/authenticate", bearer: token)
            #expect(after.status == .unauthorized)
            #expect(after.sessionJWT == nil)
        }
    }
}
