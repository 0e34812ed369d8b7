import Crypto
import Foundation
import TesseraTokens

@testable import Tessera

/// App Attest in the fake server, as the contract says (API.md, "Attested installations"): challenges,
/// an attestation's key stored for its installation once the start succeeded, assertions checked
/// against it with clientDataHash = SHA-256(challenge ‖ installation ID), and `enforce` refusals. In
/// `off` the evidence is only recorded in ``AppAttestModel/received`` (nothing is stored or refused).
struct AppAttestModel: Sendable {
    enum Mode: Sendable { case off, enforce }

    var mode = Mode.off
    var allowUnsupported = false
    var challenges: Set<String> = []
    /// Challenges the server answers as expired (`challenge_invalid`, reason `expired`) when they come back.
    var expired: Set<String> = []
    /// Installation → its attested key ID and the last counter.
    var keys: [String: (keyID: String, counter: Int)] = [:]
    /// What each start and identify carried: `anonymous attestation key-1`, `identify assertion key-1`,
    /// `anonymous unsupported`, `anonymous none`.
    var received: [String] = []
}

extension FakeServer {
    func setAppAttest(_ mode: AppAttestModel.Mode, allowUnsupported: Bool = false) {
        state.withLock {
            $0.appAttest.mode = mode
            $0.appAttest.allowUnsupported = allowUnsupported
        }
    }

    var appAttest: AppAttestModel { state.withLock { $0.appAttest } }

    /// The challenges issued so far expire: the server refuses them with reason `expired`.
    func expireAppAttestChallenges() {
        state.withLock { $0.appAttest.expired.formUnion($0.appAttest.challenges) }
    }

    /// Forgets the installation's key, as a server whose mode was `off` when it attested would not know it.
    func forgetAppAttestKeys() { state.withLock { $0.appAttest.keys = [:] } }

    static func challenge(_ state: inout State) -> Reply {
        var generator = SystemRandomNumberGenerator()
        let challenge = Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
        state.appAttest.challenges.insert(challenge)
        return .json(200, ["challenge": challenge, "expires_at": "2030-01-01T00:00:00Z"])
    }

    static func attestationInvalid(_ reason: String) -> Reply {
        .json(403, ["error": ["code": "attestation_invalid", "message": "scripted", "reason": reason]])
    }

    /// Gates a start or identify of `installationID`; a refusal, or nil when it goes through (then the
    /// key of an attestation is stored for the installation).
    static func gateAppAttest(
        _ body: [String: Any], endpoint: String, installationID: String?, _ state: inout State
    ) -> Reply? {
        let attestation = body["attestation"] as? [String: Any]
        let assertion = body["assertion"] as? [String: Any]
        let kind: String
        if attestation?["unsupported"] as? Bool == true {
            kind = "unsupported"
        } else if let attestation {
            kind = "attestation \(attestation["key_id"] as? String ?? "?")"
        } else if let assertion {
            kind = "assertion \(assertion["key_id"] as? String ?? "?")"
        } else {
            kind = "none"
        }
        state.appAttest.received.append("\(endpoint) \(kind)")
        guard state.appAttest.mode == .enforce else { return nil }
        if kind == "unsupported" { return state.appAttest.allowUnsupported ? nil : .error(403, "attestation_required") }
        guard let evidence = attestation ?? assertion else { return .error(403, "attestation_required") }
        if let challenge = evidence["challenge"] as? String, state.appAttest.expired.remove(challenge) != nil {
            state.appAttest.challenges.remove(challenge)
            return .json(400, ["error": ["code": "challenge_invalid", "message": "scripted", "reason": "expired"]])
        }
        guard let challenge = evidence["challenge"] as? String, state.appAttest.challenges.remove(challenge) != nil,
            let challengeBytes = Base64URL.decode(challenge)
        else { return .error(400, "challenge_invalid") }
        let keyID = evidence["key_id"] as? String
        let signed =
            ((evidence["attestation_object"] ?? evidence["assertion"]) as? String)
            .flatMap { Data(base64Encoded: $0) }
            .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
        guard signed["key_id"] as? String == keyID, let keyID else { return attestationInvalid("key_id") }
        if attestation != nil {
            guard signed["hash"] as? String == Data(SHA256.hash(data: challengeBytes)).base64EncodedString() else {
                return attestationInvalid("nonce")
            }
            guard let installationID else { return attestationInvalid("key_id") }
            state.appAttest.keys[installationID] = (keyID, 0)
            return nil
        }
        guard let installationID, let stored = state.appAttest.keys[installationID], stored.keyID == keyID else {
            return attestationInvalid("key_id")
        }
        let expected = Data(SHA256.hash(data: challengeBytes + Array(installationID.utf8))).base64EncodedString()
        guard signed["hash"] as? String == expected else { return attestationInvalid("challenge") }
        guard let counter = signed["counter"] as? Int, counter > stored.counter else {
            return attestationInvalid("counter")
        }
        state.appAttest.keys[installationID]?.counter = counter
        return nil
    }
}
