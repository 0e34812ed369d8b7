import Foundation
import HTTPTypes
import TesseraTokens
import Testing

@testable import TesseraServer

/// Rate limits through the API, on the selected backend. The test clock starts 40 s into a
/// one-minute window, so a fresh block answers `Retry-After: 20`.
@Suite("Rate limits")
struct RateLimitTests {
    private static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    private func settings(_ change: (inout RateLimits) -> Void) -> ProjectSettings {
        var settings = ProjectSettings()
        change(&settings.rateLimits)
        return settings
    }

    private func start(
        _ client: APIClient, installationID: String = UUID().uuidString.lowercased(), from: String? = nil
    )
        async throws -> Reply
    {
        try await client.send(
            .post, "/v1/sessions/anonymous", bearer: client.publishableKey,
            body:
                #"{"installation_id":"\#(installationID)","installation_secret":"\#(OpaqueToken.installationSecret())"}"#,
            headers: from.map { [Self.forwardedFor: $0] } ?? [:])
    }

    private func badIdentify(_ client: APIClient, bearer: String? = nil, from: String? = nil) async throws -> Reply {
        let forged = IdentityTokenMinter(secret: IdentitySecret.generate()).mint(
            IdentityClaims(subject: "someone", expiration: client.environment.clock.now.addingTimeInterval(300)))
        return try await client.send(
            .post, "/v1/sessions/identify", bearer: bearer ?? client.publishableKey,
            body: #"{"identity_token":"\#(forged)"}"#, headers: from.map { [Self.forwardedFor: $0] } ?? [:])
    }

    private func expectLimited(_ reply: Reply, retryAfter: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.status == .tooManyRequests, sourceLocation: sourceLocation)
        #expect(reply.errorCode == "rate_limited", sourceLocation: sourceLocation)
        #expect(reply.headers[.retryAfter] == String(retryAfter), sourceLocation: sourceLocation)
        #expect(reply.headers[HTTPField.Name("X-Request-Id")!] != nil, sourceLocation: sourceLocation)
    }

    @Test("Anonymous starts per address: 429 past the limit, counted across nodes, reset next window")
    func anonymousStarts() async throws {
        let environment = try await TestEnvironment.make(settings: settings { $0.anonymousStartsPerMinute = 3 })
        try await environment.withApp { node in
            try await environment.withApp { other in
                for _ in 0..<2 { #expect(try await start(node).status == .created) }
                #expect(try await start(other).status == .created)
                let refusedInstallation = UUID().uuidString.lowercased()
                expectLimited(try await start(node, installationID: refusedInstallation), retryAfter: 20)
                expectLimited(try await start(other), retryAfter: 20)
                environment.clock.advance(seconds: 5)
                expectLimited(try await start(node), retryAfter: 15)
                environment.clock.advance(seconds: 15)
                // A refused start changed nothing: its installation is new in the next window.
                #expect(try await start(node, installationID: refusedInstallation).status == .created)
                #expect(try await start(other).status == .created)
            }
        }
    }

    @Test("Wrong secrets for a known installation count: 409 up to the limit, then 429 on every node")
    func installationSecretGuesses() async throws {
        let environment = try await TestEnvironment.make(settings: settings { $0.anonymousStartsPerMinute = 3 })
        try await environment.withApp { node in
            try await environment.withApp { other in
                let installation = UUID().uuidString.lowercased()
                #expect(try await start(node, installationID: installation).status == .created)
                // Each start below brings a new random secret: a guess. Its refusal rolls back its
                // transaction, and its hit must be counted all the same (before the fix: 409 forever).
                for client in [node, other] {
                    let guess = try await start(client, installationID: installation)
                    #expect(guess.status == .conflict)
                    #expect(guess.errorCode == "installation_conflict")
                }
                expectLimited(try await start(node, installationID: installation), retryAfter: 20)
                expectLimited(try await start(other, installationID: installation), retryAfter: 20)
            }
        }
    }

    @Test("Failed identifies per address: the limit's failures answer as such, then 429 on every node")
    func failedIdentifiesPerAddress() async throws {
        let environment = try await TestEnvironment.make(settings: settings { $0.failedIdentifiesPerMinute = 3 })
        try await environment.withApp { node in
            try await environment.withApp { other in
                for client in [node, other, node] {
                    #expect(try await badIdentify(client).errorCode == "invalid_signature")
                }
                // The node that counted the third failure refuses at once, even a good token.
                expectLimited(
                    try await node.identify(sub: "good"), retryAfter: 20)
                expectLimited(try await badIdentify(node), retryAfter: 20)
                // The other node lets one more attempt through, whose count finds the shared one over.
                expectLimited(try await badIdentify(other), retryAfter: 20)
                expectLimited(
                    try await other.identify(sub: "good"), retryAfter: 20)
                // Anonymous starts are another counter.
                #expect(try await start(node).status == .created)
                environment.clock.advance(seconds: 20)
                #expect(try await node.identify(sub: "good").status == .ok)
                #expect(try await badIdentify(other).errorCode == "invalid_signature")
            }
        }
    }

    @Test("A replayed identity token counts as a failed identify")
    func replayCounts() async throws {
        try await TestEnvironment.withApp(settings: settings { $0.failedIdentifiesPerMinute = 1 }) {
            environment, client in
            let token = environment.identityToken(sub: "once", jti: "j-1")
            #expect(try await client.identify(token: token).status == .ok)
            #expect(try await client.identify(token: token).errorCode == "identity_token_replayed")
            expectLimited(try await client.identify(sub: "once"), retryAfter: 20)
        }
    }

    @Test("Failed identifies per installation: another installation at the same address is not blocked")
    func failedIdentifiesPerInstallation() async throws {
        let environment = try await TestEnvironment.make(
            settings: settings {
                $0.failedIdentifiesPerMinute = nil
                $0.failedIdentifiesPerInstallationPerMinute = 2
            })
        try await environment.withApp { client in
            let token = try #require(try await start(client).sessionToken)
            let otherToken = try #require(try await start(client).sessionToken)
            for _ in 0..<2 {
                #expect(try await badIdentify(client, bearer: token).errorCode == "invalid_signature")
            }
            expectLimited(try await badIdentify(client, bearer: token), retryAfter: 20)
            expectLimited(
                try await client.identify(sub: "u", bearer: token), retryAfter: 20)
            #expect(try await badIdentify(client, bearer: otherToken).errorCode == "invalid_signature")
            #expect(try await badIdentify(client).errorCode == "invalid_signature")
            environment.clock.advance(seconds: 20)
            #expect(try await client.identify(sub: "u", bearer: token).status == .ok)
        }
    }

    @Test("Session lookups that find no session: 429 per address, even for a valid token from it")
    func sessionGuessing() async throws {
        let environment = try await TestEnvironment.make {
            $0.failedSessionLookupsPerMinute = 3
            $0.trustedProxyHeader = "X-Forwarded-For"
        }
        try await environment.withApp { client in
            let attacker = "198.51.100.7"
            let bystander = "203.0.113.9"
            let session = try await start(client, from: attacker)
            let token = try #require(session.sessionToken)
            let jwt = try #require(session.sessionJWT)
            func authenticate(_ credential: String, from address: String) async throws -> Reply {
                try await client.send(
                    .post, "/v1/sessions/authenticate", bearer: credential, headers: [Self.forwardedFor: address])
            }
            for _ in 0..<3 {
                #expect(
                    try await authenticate(OpaqueToken.sessionToken(), from: attacker).errorCode == "session_not_found")
            }
            expectLimited(try await authenticate(OpaqueToken.sessionToken(), from: attacker), retryAfter: 20)
            // Blocked means blocked: a good guess would otherwise still stand out.
            expectLimited(try await authenticate(token, from: attacker), retryAfter: 20)
            expectLimited(
                try await client.send(.get, "/v1/me", bearer: jwt, headers: [Self.forwardedFor: attacker]),
                retryAfter: 20)
            #expect(try await authenticate(token, from: bystander).status == .ok)
            // The publishable key is not a session credential: the address can still start.
            #expect(try await start(client, from: attacker).status == .created)
            environment.clock.advance(seconds: 20)
            #expect(try await authenticate(token, from: attacker).status == .ok)
            #expect(try await authenticate(OpaqueToken.sessionToken(), from: attacker).errorCode == "session_not_found")
        }
    }

    @Test("Expired and revoked sessions are not guesses and are not counted")
    func knownSessionsAreNotGuesses() async throws {
        let environment = try await TestEnvironment.make { $0.failedSessionLookupsPerMinute = 1 }
        try await environment.withApp { client in
            let token = try #require(try await start(client).sessionToken)
            #expect(try await client.send(.post, "/v1/sessions/revoke", bearer: token).status == .noContent)
            for _ in 0..<3 {
                #expect(
                    try await client.send(.post, "/v1/sessions/authenticate", bearer: token).errorCode
                        == "session_revoked")
            }
        }
    }

    @Test("The trusted proxy header is honoured only when configured, and only its right-most address")
    func trustedProxyHeader() async throws {
        let limited = settings { $0.failedIdentifiesPerMinute = 2 }
        let plain = try await TestEnvironment.make(settings: limited)
        try await plain.withApp { client in
            #expect(try await badIdentify(client, from: "192.0.2.1").status == .unauthorized)
            #expect(try await badIdentify(client, from: "192.0.2.2").status == .unauthorized)
            expectLimited(try await badIdentify(client, from: "192.0.2.3"), retryAfter: 20)
        }
        let proxied = try await TestEnvironment.make(settings: limited) { $0.trustedProxyHeader = "X-Forwarded-For" }
        try await proxied.withApp { client in
            for address in ["192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"] {
                #expect(try await badIdentify(client, from: address).status == .unauthorized)
            }
            // What the client wrote left of the proxy's entry is ignored.
            #expect(try await badIdentify(client, from: "10.0.0.1, 192.0.2.9").status == .unauthorized)
            #expect(try await badIdentify(client, from: "10.0.0.2, 192.0.2.9").status == .unauthorized)
            expectLimited(try await badIdentify(client, from: "10.0.0.3, 192.0.2.9"), retryAfter: 20)
            // One subscriber's IPv6 /64 is one client.
            #expect(try await badIdentify(client, from: "2001:db8:1:2::1").status == .unauthorized)
            #expect(try await badIdentify(client, from: "2001:db8:1:2:ffff::9").status == .unauthorized)
            expectLimited(try await badIdentify(client, from: "[2001:db8:1:2::77]:5000"), retryAfter: 20)
        }
    }

    @Test("Project settings: rate_limits read, patched, validated, and applied at once")
    func projectSettings() async throws {
        try await TestEnvironment.withApp { environment, client in
            let read = try await client.admin(.get, "/v1/admin/project")
            let limits = read["project"]["settings"] as? [String: Any]
            let defaults = try #require(limits?["rate_limits"] as? [String: Any])
            #expect(defaults["anonymous_starts_per_minute"] as? Int == 600)
            #expect(defaults["failed_identifies_per_minute"] as? Int == 60)
            #expect(defaults["failed_identifies_per_installation_per_minute"] as? Int == 10)

            let patched = try await client.admin(
                .patch, "/v1/admin/project",
                body: #"{"rate_limits":{"anonymous_starts_per_minute":1,"failed_identifies_per_minute":null}}"#)
            #expect(patched.status == .ok)
            let now = try #require((patched["project"]["settings"] as? [String: Any])?["rate_limits"] as? [String: Any])
            #expect(now["anonymous_starts_per_minute"] as? Int == 1)
            #expect(now["failed_identifies_per_minute"] is NSNull)
            #expect(now["failed_identifies_per_installation_per_minute"] as? Int == 10)
            let stored = try await environment.store.project(id: environment.project.project.id)
            #expect(stored?.settings.rateLimits.anonymousStartsPerMinute == 1)
            #expect(stored?.settings.rateLimits.failedIdentifiesPerMinute == nil)

            #expect(try await start(client).status == .created)
            expectLimited(try await start(client), retryAfter: 20)
            for _ in 0..<5 { #expect(try await badIdentify(client).status == .unauthorized) }
            // Raising a limit lifts this node's block at once.
            _ = try await client.admin(
                .patch, "/v1/admin/project",
                body: #"{"rate_limits":{"anonymous_starts_per_minute":null}}"#)
            #expect(try await start(client).status == .created)

            for body in [
                #"{"rate_limits":{"anonymous_starts_per_minute":0}}"#,
                #"{"rate_limits":{"anonymous_starts_per_minute":-5}}"#,
                #"{"rate_limits":{"anonymous_starts_per_minute":1000001}}"#,
                #"{"rate_limits":{"anonymous_starts_per_minute":"many"}}"#,
                #"{"rate_limits":{"anonymous_starts_per_hour":5}}"#,
                #"{"rate_limits":7}"#,
            ] {
                let bad = try await client.admin(.patch, "/v1/admin/project", body: body)
                #expect(bad.status == .badRequest, "\(body)")
                #expect(bad.errorCode == "invalid_request", "\(body)")
            }
        }
    }

    @Test("A heartbeat, and any request that finds its session, touches no counter")
    func heartbeatCountsNothing() async throws {
        let environment = try await TestEnvironment.make(backend: .sqlite)
        let store = try #require(environment.store as? SQLiteStore)
        @Sendable func counters() throws -> [Int64] {
            try store.readers.read { try $0.query("SELECT hits FROM rate_limit_windows").map { $0.int(0) } }
        }
        try await environment.withApp { client in
            let session = try await start(client)
            #expect(try counters() == [1])
            for _ in 0..<20 {
                #expect(
                    try await client.send(.post, "/v1/sessions/authenticate", bearer: session.sessionToken).status
                        == .ok)
            }
            #expect(try await client.send(.get, "/v1/me", bearer: session.sessionJWT).status == .ok)
            #expect(try counters() == [1])
        }
    }

    @Test("Over a socket the client is the peer address")
    func socketAddress() async throws {
        try await TestEnvironment.withApp(settings: settings { $0.failedIdentifiesPerMinute = 5 }, .live) {
            environment, client in
            let reply = try await badIdentify(client, from: "192.0.2.55")
            #expect(reply.status == .unauthorized)
            // (The store closes with the application, so it is read inside.)
            let window = RateLimitWindow(containing: environment.clock.seconds)
            let projectID = environment.project.project.id
            let hits = try await environment.store.hitRateLimits(
                [
                    RateLimitKey(projectID: projectID, bucket: .failedIdentifyByAddress, key: "127.0.0.1"),
                    RateLimitKey(projectID: projectID, bucket: .failedIdentifyByAddress, key: "192.0.2.55"),
                ], window: window)
            #expect(hits == [2, 1])
        }
    }
}
