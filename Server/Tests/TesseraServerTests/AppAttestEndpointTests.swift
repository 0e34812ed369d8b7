import Crypto
import Foundation
import HummingbirdTesting
import TesseraAttest
import TesseraTokens
import Testing

@testable import TesseraServer

/// App Attest at the endpoints: challenges, attested starts, asserted restores and identifies, the
/// four modes, and verdicts as operators see them, with attestations forged by a test CA the server
/// is told to trust.
@Suite("App Attest endpoints")
struct AppAttestEndpointTests {
    static let appID = "TEAMID1234.dev.tessera.attest"

    /// An environment whose project has `mode`, trusting `authority`, at a time its chains are valid.
    /// Starts a new installation without attestation (the project's mode lets it through), then
    /// sets the mode to `enforce_new`; answers the installation and its secret.
    static func knownThenEnforceNew(_ client: APIClient) async throws -> (installationID: String, secret: String) {
        let installationID = UUID().uuidString.lowercased()
        let secret = OpaqueToken.installationSecret()
        #expect(try await client.anonymous(installationID: installationID, secret: secret).status == .created)
        let patched = try await client.admin(
            .patch, "/v1/admin/project", body: #"{"app_attest":{"mode":"enforce_new"}}"#)
        #expect(patched.status == .ok)
        return (installationID, secret)
    }

    static func environment(
        _ backend: StoreBackend, mode: AppAttestSettings.Mode, allowUnsupported: Bool = false,
        authority: TestAuthority
    ) async throws -> TestEnvironment {
        var settings = ProjectSettings()
        settings.appAttest.mode = mode
        settings.appAttest.appIDs = [appID]
        settings.appAttest.allowUnsupported = allowUnsupported
        let environment = try await TestEnvironment.make(backend: backend, settings: settings) {
            $0.appAttestTrustAnchors = [authority.root]
        }
        environment.clock.advance(
            seconds: ForgedAttestation.verifyAt.timeIntervalSince1970 - environment.clock.now.timeIntervalSince1970)
        return environment
    }

    /// Runs `body` against the application of an ``environment(_:mode:allowUnsupported:authority:)``
    /// trusting a new test authority, with the environment and the authority.
    static func withAttestedApp(
        _ backend: StoreBackend, mode: AppAttestSettings.Mode, allowUnsupported: Bool = false,
        _ body: @escaping @Sendable (TestEnvironment, APIClient, TestAuthority) async throws -> Void
    ) async throws {
        let authority = try TestAuthority()
        let environment = try await environment(
            backend, mode: mode, allowUnsupported: allowUnsupported, authority: authority)
        try await environment.withApp { client in try await body(environment, client, authority) }
    }

    @Test("A challenge is 32 random bytes in base64url, valid five minutes", arguments: StoreBackend.allCases)
    func challenge(backend: StoreBackend) async throws {
        try await Self.withAttestedApp(backend, mode: .monitor) { environment, client, authority in
            let reply = try await client.send(.post, "/v1/attestations/challenge", bearer: client.publishableKey)
            #expect(reply.status == .ok)
            let challenge = try #require(reply.json["challenge"] as? String)
            #expect(Base64URL.decode(challenge)?.count == 32)
            #expect(reply.json["expires_at"] as? String == RFC3339.string(environment.clock.seconds + 300))
            let other = try await client.challenge()
            #expect(other.text != challenge)
            #expect(
                try await client.send(.post, "/v1/attestations/challenge", bearer: client.secretKey).status
                    == .unauthorized)
        }
    }

    @Test("Challenges count against anonymous_starts_per_minute per client address, on a counter of their own")
    func challengeRateLimit() async throws {
        var settings = ProjectSettings()
        settings.rateLimits.anonymousStartsPerMinute = 2
        try await TestEnvironment.withApp(settings: settings) { environment, client in
            for _ in 0..<2 {
                #expect(
                    try await client.send(.post, "/v1/attestations/challenge", bearer: client.publishableKey).status
                        == .ok)
            }
            let limited = try await client.send(.post, "/v1/attestations/challenge", bearer: client.publishableKey)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.errorCode == "rate_limited")
            #expect(try await client.anonymous().status == .created, "starts keep their own counter")
        }
    }

    @Test("A start refused for its evidence counts against anonymous_starts_per_minute")
    func refusedStartsCount() async throws {
        let authority = try TestAuthority()
        var settings = ProjectSettings()
        settings.rateLimits.anonymousStartsPerMinute = 2
        settings.appAttest.mode = .enforce
        settings.appAttest.appIDs = [Self.appID]
        let environment = try await TestEnvironment.make(settings: settings) {
            $0.appAttestTrustAnchors = [authority.root]
        }
        try await environment.withApp { client in
            #expect(try await client.anonymous().errorCode == "attestation_required")
            #expect(try await client.anonymous().errorCode == "attestation_required")
            let limited = try await client.anonymous()
            #expect(limited.status == .tooManyRequests)
        }
    }

    @Test(
        "enforce: a script without an attestation creates no profile; the genuine app attests, then asserts",
        arguments: StoreBackend.allCases)
    func enforce(backend: StoreBackend) async throws {
        try await Self.withAttestedApp(backend, mode: .enforce) { environment, client, authority in
            for _ in 0..<5 {
                let refused = try await client.anonymous()
                #expect(refused.status == .forbidden)
                #expect(refused.errorCode == "attestation_required")
            }
            let unsupported = try await client.anonymous(extra: #","attestation":{"unsupported":true}"#)
            #expect(unsupported.errorCode == "attestation_required")
            let counts = try await environment.store.projectCounts(
                projectID: environment.project.project.id, now: environment.clock.seconds)
            #expect(counts.profiles == 0)

            let device = try await AttestedDevice.start(client, authority: authority)
            #expect(device.started.status == .created)
            // A restore must assert, with a rising counter.
            let bare = try await client.anonymous(installationID: device.installationID, secret: device.secret)
            #expect(bare.errorCode == "attestation_required")
            #expect(try await device.restore(client, counter: 1).status == .ok)
            let stale = try await device.restore(client, counter: 1)
            #expect(stale.status == .forbidden)
            #expect(stale.errorCode == "attestation_invalid")
            #expect(stale["error"]["reason"] as? String == "counter")
            #expect(try await device.restore(client, counter: 2).status == .ok)
            // Identify from the installation asserts too.
            let token = environment.identityToken(sub: "user-1")
            let session = try #require(device.started.sessionToken)
            #expect(try await client.identify(token: token, bearer: session).errorCode == "attestation_required")
            let challenge = try await client.challenge()
            let identified = try await client.identify(
                sub: "user-1", bearer: session,
                extra: "," + (try device.assertion(counter: 3, challenge: challenge.bytes)))
            #expect(identified.status == .ok)
            let after = try await environment.store.projectCounts(
                projectID: environment.project.project.id, now: environment.clock.seconds)
            #expect(after.profiles == 1)
        }
    }

    @Test("A challenge is single-use and expires after five minutes", arguments: StoreBackend.allCases)
    func challengeSingleUse(backend: StoreBackend) async throws {
        try await Self.withAttestedApp(backend, mode: .enforce) { environment, client, authority in
            let challenge = try await client.challenge()
            let first = try await AttestedDevice.start(client, authority: authority, challenge: challenge)
            #expect(first.started.status == .created)
            let second = try await AttestedDevice.start(client, authority: authority, challenge: challenge)
            #expect(second.started.status == .badRequest)
            #expect(second.started.errorCode == "challenge_invalid")
            let late = try await client.challenge()
            _ = try await client.challenge()
            environment.clock.advance(seconds: 300)
            let expired = try await AttestedDevice.start(client, authority: authority, challenge: late)
            #expect(expired.started.errorCode == "challenge_invalid")
            #expect(expired.started["error"]["reason"] as? String == "expired")
            let unknown = try await AttestedDevice.start(
                client, authority: authority,
                challenge: (Base64URL.encode([UInt8](repeating: 7, count: 32)), [UInt8](repeating: 7, count: 32)))
            #expect(unknown.started.errorCode == "challenge_invalid")
            // The cleanup forgets expired challenges (the one never used; the one that came back is gone).
            environment.clock.advance(seconds: 1)
            let cleaned = try await environment.store.deleteExpired(now: environment.clock.seconds, batchSize: 100)
            #expect(cleaned.appAttestChallenges == 1)
        }
    }

    @Test(
        "monitor: refuses nothing, records each verdict and counts what enforce would have refused",
        arguments: StoreBackend.allCases)
    func monitor(backend: StoreBackend) async throws {
        try await Self.withAttestedApp(backend, mode: .monitor) { environment, client, authority in
            var profiles: [String] = []
            for _ in 0..<3 {
                let started = try await client.anonymous()
                #expect(started.status == .created)
                profiles.append(try #require(started.profileID))
            }
            let device = try await AttestedDevice.start(client, authority: authority)
            #expect(device.started.status == .created)
            var wrongApp = ForgedAttestation(authority: authority)
            wrongApp.appID = "TEAMID1234.dev.tessera.other"
            let failed = try await AttestedDevice.start(client, authority: authority, forged: wrongApp)
            #expect(failed.started.status == .created)

            let metrics = String(decoding: try await client.send(.get, "/metrics").body, as: UTF8.self)
            #expect(metrics.contains(#"tessera_app_attest_checks_total{gate="new_installation"} 5"#))
            #expect(metrics.contains(#"tessera_app_attest_enforce_would_refuse_total{gate="new_installation"} 4"#))
            #expect(metrics.contains(#"tessera_app_attest_verdicts_total{verdict="unattested"} 3"#))
            #expect(metrics.contains(#"tessera_app_attest_verdicts_total{verdict="attested"} 1"#))
            #expect(metrics.contains(#"tessera_app_attest_verdicts_total{verdict="failed"} 1"#))

            let project = try await client.admin(.get, "/v1/admin/project")
            let installations = project["project"]["app_attest_installations"] as? [String: Int]
            #expect(installations?["unattested"] == 3)
            #expect(installations?["attested"] == 1)
            #expect(installations?["failed"] == 1)
            #expect(installations?["enforce_would_refuse"] == 4)

            let unattested = try await client.admin(.get, "/v1/admin/profiles/\(profiles[0])")
            let record = try #require((unattested.json["installations"] as? [[String: Any]])?.first)
            let attest = record["app_attest"] as? [String: Any]
            #expect(attest?["verdict"] as? String == "unattested")
            #expect(attest?["enforce_would_refuse"] as? Bool == true)
            let lookup = try await client.admin(.get, "/v1/admin/lookup?q=\(device.installationID)")
            let attested = (lookup.json["installations"] as? [[String: Any]])?.first?["app_attest"] as? [String: Any]
            #expect(attested?["verdict"] as? String == "attested")
            #expect((attested?["key"] as? [String: Any])?["app_id"] as? String == Self.appID)
            let failedLookup = try await client.admin(
                .get, "/v1/admin/profiles/\(try #require(failed.started.profileID))")
            let failedRecord = (failedLookup.json["installations"] as? [[String: Any]])?.first?["app_attest"]
            #expect((failedRecord as? [String: Any])?["verdict"] as? String == "failed: app_id")
        }
    }

    @Test(
        "enforce_new gates only new installations; allow_unsupported lets unsupported devices through",
        arguments: StoreBackend.allCases)
    func enforceNew(backend: StoreBackend) async throws {
        try await Self.withAttestedApp(backend, mode: .monitor) { environment, client, authority in
            let (installationID, secret) = try await AppAttestEndpointTests.knownThenEnforceNew(client)
            #expect(try await client.anonymous(installationID: installationID, secret: secret).status == .ok)
            #expect(try await client.anonymous().errorCode == "attestation_required")
            let unsupported = #","attestation":{"unsupported":true}"#
            #expect(try await client.anonymous(extra: unsupported).errorCode == "attestation_required")
            _ = try await client.admin(.patch, "/v1/admin/project", body: #"{"app_attest":{"allow_unsupported":true}}"#)
            let allowed = try await client.anonymous(extra: unsupported)
            #expect(allowed.status == .created)
            let record = try await environment.store.appAttestState(
                projectID: environment.project.project.id,
                installationID: try #require(allowed["session"]["installation_id"] as? String))
            #expect(record.record?.verdict == "unsupported")
            #expect(try await AttestedDevice.start(client, authority: authority).started.status == .created)
        }
    }

    @Test("An attestation that fails verification is refused with its reason under enforce")
    func reasons() async throws {
        try await Self.withAttestedApp(.selected, mode: .enforce) { environment, client, authority in
            var development = ForgedAttestation(authority: authority)
            development.aaguid = AppAttestEnvironment.development.aaguid
            let wrongEnvironment = try await AttestedDevice.start(client, authority: authority, forged: development)
            #expect(wrongEnvironment.started["error"]["reason"] as? String == "environment")
            let other = try TestAuthority(name: "Not Apple")
            let untrusted = try await AttestedDevice.start(client, authority: other)
            #expect(untrusted.started.errorCode == "attestation_invalid")
            #expect(untrusted.started["error"]["reason"] as? String == "root")
            let garbage = try await client.anonymous(
                extra:
                    #","attestation":{"key_id":"AAAA","attestation_object":"%%%","challenge":"\#(try await client.challenge().text)"}"#
            )
            #expect(garbage["error"]["reason"] as? String == "format")
            let both = try await client.anonymous(
                extra: #","attestation":{"unsupported":true},"assertion":{"unsupported":true}"#)
            #expect(both.errorCode == "invalid_request")
            let missing = try await client.anonymous(extra: #","assertion":{"key_id":"AAAA"}"#)
            #expect(missing.errorCode == "invalid_request")
        }
    }

    @Test("Evidence members are checked for shape and length whatever the mode, and otherwise ignored while off")
    func shapes() async throws {
        try await TestEnvironment.withApp { environment, client in
            let long = String(repeating: "A", count: 129)
            for extra in [
                #","assertion":{"key_id":"\#(long)","assertion":"AAAA","challenge":"AAAA"}"#,
                #","attestation":{"key_id":"","attestation_object":"AAAA","challenge":"AAAA"}"#,
                #","attestation":{"unsupported":false}"#,
                #","attestation":"yes""#,
            ] {
                #expect(try await client.anonymous(extra: extra).errorCode == "invalid_request", "\(extra)")
            }
            #expect(try await client.anonymous(extra: #","attestation":{"unsupported":true}"#).status == .created)
            let session = try #require(try await client.anonymous().sessionToken)
            let token = environment.identityToken(sub: "shape")
            let attesting = try await client.identify(
                token: token, bearer: session,
                extra: #","attestation":{"key_id":"AAAA","attestation_object":"AAAA","challenge":"AAAA"}"#)
            #expect(attesting.status == .ok, "an identify may attest a new key (ignored while the mode is off)")
            let next = try #require(attesting.sessionToken)
            let empty = try await client.identify(
                sub: "shape", bearer: next,
                extra: #","attestation":{"key_id":"","attestation_object":"AAAA","challenge":"AAAA"}"#)
            #expect(empty.errorCode == "invalid_request")
            let unsupported = try await client.identify(
                sub: "shape", bearer: next,
                extra: #","attestation":{"unsupported":true}"#)
            #expect(unsupported.status == .ok)
        }
    }

    @Test("enforce with allow_unsupported: a device that cannot attest starts, restores and identifies")
    func unsupportedUnderEnforce() async throws {
        try await Self.withAttestedApp(.selected, mode: .enforce, allowUnsupported: true) {
            environment, client, authority in
            let unsupported = #","attestation":{"unsupported":true}"#
            let installationID = UUID().uuidString.lowercased()
            let secret = OpaqueToken.installationSecret()
            let started = try await client.anonymous(installationID: installationID, secret: secret, extra: unsupported)
            #expect(started.status == .created)
            #expect(
                try await client.anonymous(installationID: installationID, secret: secret, extra: unsupported).status
                    == .ok)
            let session = try #require(started.sessionToken)
            let token = environment.identityToken(sub: "simulator")
            #expect(try await client.identify(token: token, bearer: session).errorCode == "attestation_required")
            #expect(try await client.identify(token: token, bearer: session, extra: unsupported).status == .ok)
        }
    }

    @Test("Project settings: app_attest is read, patched member by member, and validated")
    func settings() async throws {
        try await TestEnvironment.withApp { environment, client in
            let initial = try await client.admin(.get, "/v1/admin/project")
            let off = initial["project"]["settings"] as? [String: Any]
            let attest = off?["app_attest"] as? [String: Any]
            #expect(attest?["mode"] as? String == "off")
            #expect(attest?["environment"] as? String == "production")
            #expect(attest?["allow_unsupported"] as? Bool == false)
            #expect((attest?["app_ids"] as? [String])?.isEmpty == true)
            for (body, _) in [
                (#"{"app_attest":{"mode":"strict"}}"#, "mode"),
                (#"{"app_attest":{"app_ids":["ABCDE12345.com.example","ABCDE12345.com.example"]}}"#, "duplicate"),
                (#"{"app_attest":{"app_ids":["ABCDE12345.com.example."]}}"#, "trailing dot"),
                (#"{"app_attest":{"app_ids":["teamid.com.example"]}}"#, "app ID"),
                (#"{"app_attest":{"environment":"staging"}}"#, "environment"),
                (#"{"app_attest":{"colour":"blue"}}"#, "unknown member"),
                (#"{"app_attest":{"allow_unsupported":"yes"}}"#, "type"),
                (#"{"app_attest":{"allow_unsupported":null}}"#, "null"),
                (#"{"app_attest":{"mode":null}}"#, "null mode"),
                (#"{"app_attest":{"app_ids":null}}"#, "null app IDs"),
            ] {
                let refused = try await client.admin(.patch, "/v1/admin/project", body: body)
                #expect(refused.status == .badRequest)
                #expect(refused.errorCode == "invalid_request")
            }
            let set = try await client.admin(
                .patch, "/v1/admin/project",
                body:
                    #"{"app_attest":{"mode":"monitor","app_ids":["ABCDE12345.com.example.app"],"environment":"development"}}"#
            )
            #expect(set.status == .ok)
            let stored = try await environment.store.project(id: environment.project.project.id)
            #expect(stored?.settings.appAttest.mode == .monitor)
            #expect(stored?.settings.appAttest.appIDs == ["ABCDE12345.com.example.app"])
            #expect(stored?.settings.appAttest.environment == .development)
            let events = try await client.admin(.get, "/v1/admin/events?type=project.updated")
            let changed = (events.json["events"] as? [[String: Any]])?.first?["data"] as? [String: Any]
            #expect((changed?["changed"] as? [String]) == ["app_attest"])
        }
    }

    @Test("On two nodes of one PostgreSQL database, an assertion's counter rises once: a replay is refused")
    func twoNodes() async throws {
        guard PostgresTestDatabase.isConfigured else { return }
        let authority = try TestAuthority()
        let environment = try await Self.environment(.postgres, mode: .enforce, authority: authority)
        let first = try #require(environment.store as? PostgresStore)
        let second = PostgresStore(configuration: first.configuration, masterKeys: TestMasterKeys.keyring)
        let nodeB = try await buildApplication(configuration: environment.configuration, store: second)
        try await environment.withApp { clientA in
            try await nodeB.test(.router) { testClient in
                let clientB = APIClient(client: testClient, environment: environment)
                let device = try await AttestedDevice.start(clientA, authority: authority)
                #expect(device.started.status == .created)
                // The same assertion on node B: its challenge is spent.
                let challenge = try await clientA.challenge()
                let assertion = try device.assertion(counter: 1, challenge: challenge.bytes)
                #expect(try await device.restore(clientA, assertion: assertion).status == .ok)
                let replayed = try await device.restore(clientB, assertion: assertion)
                #expect(replayed.errorCode == "challenge_invalid")
                // A counter node A accepted, over a fresh challenge from node B: refused for its counter.
                let fresh = try await clientB.challenge()
                let again = try await device.restore(
                    clientB, assertion: try device.assertion(counter: 1, challenge: fresh.bytes))
                #expect(again["error"]["reason"] as? String == "counter")
                // Two assertions with one counter at once, one per node: exactly one goes through.
                let one = try await clientA.challenge()
                let two = try await clientB.challenge()
                async let onA = device.restore(
                    clientA, assertion: try device.assertion(counter: 2, challenge: one.bytes))
                async let onB = device.restore(
                    clientB, assertion: try device.assertion(counter: 2, challenge: two.bytes))
                let statuses = [try await onA.status, try await onB.status]
                #expect(statuses.filter { $0 == .ok }.count == 1)
                #expect(statuses.filter { $0 == .forbidden }.count == 1)
            }
        }
    }
}

/// An installation whose app attested with a forged key.
struct AttestedDevice {
    let installationID: String
    let secret: String
    let key: P256.Signing.PrivateKey
    let keyID: [UInt8]
    let started: Reply

    /// Starts a new installation with an attestation of `forged` (a valid one by default) over
    /// `challenge` (a new one by default).
    static func start(
        _ client: APIClient, authority: TestAuthority, forged: ForgedAttestation? = nil,
        challenge: (text: String, bytes: [UInt8])? = nil
    ) async throws -> AttestedDevice {
        var issued = challenge
        if issued == nil { issued = try await client.challenge() }
        let challenge = try #require(issued)
        var attestation = forged ?? ForgedAttestation(authority: authority)
        attestation.challenge = challenge.bytes
        let installationID = UUID().uuidString.lowercased()
        let secret = OpaqueToken.installationSecret()
        let member = """
            ,"attestation":{"key_id":"\(Data(attestation.keyID).base64EncodedString())",\
            "attestation_object":"\(Data(try attestation.object()).base64EncodedString())",\
            "challenge":"\(challenge.text)"}
            """
        let started = try await client.anonymous(installationID: installationID, secret: secret, extra: member)
        return AttestedDevice(
            installationID: installationID, secret: secret, key: attestation.credentialKey, keyID: attestation.keyID,
            started: started)
    }

    /// The `"assertion": {…}` member of an assertion with `counter` over `challenge`.
    func assertion(counter: UInt32, challenge: [UInt8]) throws -> String {
        let forged = ForgedAssertion(
            key: key, counter: counter,
            clientDataHash: AppAttestClientData.assertionHash(challenge: challenge, installationID: installationID))
        return """
            "assertion":{"key_id":"\(Data(keyID).base64EncodedString())",\
            "assertion":"\(Data(try forged.object()).base64EncodedString())",\
            "challenge":"\(Base64URL.encode(challenge))"}
            """
    }

    /// Restores the installation with an assertion with `counter` over a new challenge.
    func restore(_ client: APIClient, counter: UInt32) async throws -> Reply {
        let challenge = try await client.challenge()
        return try await restore(client, assertion: try assertion(counter: counter, challenge: challenge.bytes))
    }

    /// Restores the installation with the `"assertion": {…}` member `assertion`.
    func restore(_ client: APIClient, assertion: String) async throws -> Reply {
        try await client.anonymous(installationID: installationID, secret: secret, extra: "," + assertion)
    }
}

extension APIClient {
    /// A new App Attest challenge, as text and bytes.
    func challenge() async throws -> (text: String, bytes: [UInt8]) {
        let reply = try await send(.post, "/v1/attestations/challenge", bearer: publishableKey)
        let text = try #require(reply.json["challenge"] as? String)
        return (text, try #require(Base64URL.decode(text)))
    }

    /// Starts an anonymous session with `extra` appended to the body's members.
    func anonymous(
        installationID: String = UUID().uuidString.lowercased(), secret: String = OpaqueToken.installationSecret(),
        extra: String
    ) async throws -> Reply {
        try await send(
            .post, "/v1/sessions/anonymous", bearer: publishableKey,
            body: #"{"installation_id":"\#(installationID)","installation_secret":"\#(secret)"\#(extra)}"#)
    }
}
