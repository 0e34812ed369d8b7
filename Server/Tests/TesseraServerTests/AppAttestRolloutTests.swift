import Crypto
import Foundation
import TesseraAttest
import TesseraTokens
import Testing

@testable import TesseraServer

/// The rollout without lockouts: an installation whose key the server never stored (it attested while
/// the mode was `off`) proves itself again by attesting a new key at its next restore or identify,
/// identified or not; an expired challenge is refused with reason `expired`, so the app can ask again.
@Suite("App Attest rollout")
struct AppAttestRolloutTests {
    /// The `"attestation": {…}` member of a new key's attestation over a new challenge.
    static func attestation(
        _ client: APIClient, authority: TestAuthority
    ) async throws -> (member: String, key: P256.Signing.PrivateKey, keyID: [UInt8]) {
        let challenge = try await client.challenge()
        var forged = ForgedAttestation(authority: authority)
        forged.challenge = challenge.bytes
        let member = """
            "attestation":{"key_id":"\(Data(forged.keyID).base64EncodedString())",\
            "attestation_object":"\(Data(try forged.object()).base64EncodedString())",\
            "challenge":"\(challenge.text)"}
            """
        return (member, forged.credentialKey, forged.keyID)
    }

    @Test(
        "Identified while the mode was off: under monitor then enforce, the installation attests a new key at identify",
        arguments: StoreBackend.allCases)
    func identifiedWhileOff(backend: StoreBackend) async throws {
        try await AppAttestEndpointTests.withAttestedApp(backend, mode: .off) { environment, client, authority in
            let projectID = environment.project.project.id
            // Off: the first start's attestation is ignored, so the server keeps no key.
            let device = try await AttestedDevice.start(client, authority: authority)
            #expect(device.started.status == .created)
            var state = try await environment.store.appAttestState(
                projectID: projectID, installationID: device.installationID)
            #expect(state.record == nil)
            let anonymous = try #require(device.started.sessionToken)
            let first = try await client.identify(
                sub: "early-user", bearer: anonymous,
                extra: "," + (try device.assertion(counter: 1, challenge: try await client.challenge().bytes)))
            #expect(first.status == .ok)
            var session = try #require(first.sessionToken)

            // Monitor: the unknown key is recorded, nothing is refused.
            _ = try await client.admin(.patch, "/v1/admin/project", body: #"{"app_attest":{"mode":"monitor"}}"#)
            let monitored = try await client.identify(
                sub: "early-user", bearer: session,
                extra: "," + (try device.assertion(counter: 2, challenge: try await client.challenge().bytes)))
            #expect(monitored.status == .ok)
            session = try #require(monitored.sessionToken)
            state = try await environment.store.appAttestState(
                projectID: projectID, installationID: device.installationID)
            #expect(state.record?.verdict == "failed: key_id")
            #expect(state.record?.key == nil)

            // Enforce: the unknown key is refused with reason key_id; the identified installation then
            // attests a new key at its identify, and asserts with it afterwards.
            _ = try await client.admin(.patch, "/v1/admin/project", body: #"{"app_attest":{"mode":"enforce"}}"#)
            let refused = try await client.identify(
                sub: "early-user", bearer: session,
                extra: "," + (try device.assertion(counter: 3, challenge: try await client.challenge().bytes)))
            #expect(refused.status == .forbidden)
            #expect(refused.errorCode == "attestation_invalid")
            #expect(refused["error"]["reason"] as? String == "key_id")
            let attestation = try await Self.attestation(client, authority: authority)
            let attested = try await client.identify(
                sub: "early-user", bearer: session, extra: "," + attestation.member)
            #expect(attested.status == .ok)
            #expect(attested.profileID == first.profileID)
            state = try await environment.store.appAttestState(
                projectID: projectID, installationID: device.installationID)
            #expect(state.record?.verdict == "attested")
            #expect(state.record?.key?.keyID == attestation.keyID)
            session = try #require(attested.sessionToken)

            let newKey = AttestedDevice(
                installationID: device.installationID, secret: device.secret, key: attestation.key,
                keyID: attestation.keyID, started: attested)
            let asserted = try await client.identify(
                sub: "early-user", bearer: session,
                extra: "," + (try newKey.assertion(counter: 1, challenge: try await client.challenge().bytes)))
            #expect(asserted.status == .ok)
            // The old key is no longer the installation's.
            let latest = try #require(asserted.sessionToken)
            let oldKey = try await client.identify(
                sub: "early-user", bearer: latest,
                extra: "," + (try device.assertion(counter: 9, challenge: try await client.challenge().bytes)))
            #expect(oldKey["error"]["reason"] as? String == "key_id")
        }
    }

    @Test(
        "Enforce: a restore and an anonymous identify of an installation without a stored key attest a new key",
        arguments: StoreBackend.allCases)
    func anonymousWithoutKey(backend: StoreBackend) async throws {
        try await AppAttestEndpointTests.withAttestedApp(backend, mode: .off) { environment, client, authority in
            let device = try await AttestedDevice.start(client, authority: authority)
            _ = try await client.admin(.patch, "/v1/admin/project", body: #"{"app_attest":{"mode":"enforce"}}"#)
            let refused = try await device.restore(client, counter: 1)
            #expect(refused["error"]["reason"] as? String == "key_id")
            let restored = try await client.anonymous(
                installationID: device.installationID, secret: device.secret,
                extra: "," + (try await Self.attestation(client, authority: authority).member))
            #expect(restored.status == .ok)
            // Another key at the identify: the identify's attestation replaces the restore's.
            let attestation = try await Self.attestation(client, authority: authority)
            let restoredSession = try #require(restored.sessionToken)
            let identified = try await client.identify(
                sub: "late-user", bearer: restoredSession,
                extra: "," + attestation.member)
            #expect(identified.status == .ok)
            let state = try await environment.store.appAttestState(
                projectID: environment.project.project.id, installationID: device.installationID)
            #expect(state.record?.key?.keyID == attestation.keyID)
        }
    }

    @Test("An identify with the publishable key has no installation to keep an attested key for: key_id")
    func publishableKeyAttestation() async throws {
        try await AppAttestEndpointTests.withAttestedApp(.selected, mode: .enforce) { environment, client, authority in
            let attestation = try await Self.attestation(client, authority: authority)
            let refused = try await client.identify(
                sub: "no-installation", bearer: client.publishableKey,
                extra: "," + attestation.member)
            #expect(refused.errorCode == "attestation_invalid")
            #expect(refused["error"]["reason"] as? String == "key_id")
            let counts = try await environment.store.projectCounts(
                projectID: environment.project.project.id, now: environment.clock.seconds)
            #expect(counts.profiles == 0)
        }
    }

    @Test(
        "An expired challenge is challenge_invalid with reason expired; an unknown one has no reason",
        arguments: StoreBackend.allCases)
    func expiredChallenge(backend: StoreBackend) async throws {
        try await AppAttestEndpointTests.withAttestedApp(backend, mode: .enforce) { environment, client, authority in
            let late = try await client.challenge()
            environment.clock.advance(seconds: 300)
            let expired = try await AttestedDevice.start(client, authority: authority, challenge: late)
            #expect(expired.started.status == .badRequest)
            #expect(expired.started.errorCode == "challenge_invalid")
            #expect(expired.started["error"]["reason"] as? String == "expired")
            // Spent by that refusal: the same challenge again is unknown.
            let again = try await AttestedDevice.start(client, authority: authority, challenge: late)
            #expect(again.started.errorCode == "challenge_invalid")
            #expect(again.started["error"]["reason"] == nil)
            let counts = try await environment.store.projectCounts(
                projectID: environment.project.project.id, now: environment.clock.seconds)
            #expect(counts.profiles == 0)
        }
    }
}
