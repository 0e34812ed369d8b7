/// The `attestation` or `assertion` member of a start or identify body.
///
/// Members are strings (base64 for `key_id`, `attestation_object` and `assertion`; base64url for
/// `challenge`); a missing one is `400 invalid_request`, bytes that do not decode are judged by the
/// App Attest gate (`attestation_invalid`, reason `format`, or `challenge_invalid`).
struct AppAttestBody: Decodable, Sendable {
    var keyID: String?
    var attestationObject: String?
    var assertion: String?
    var challenge: String?
    var unsupported: Bool?

    enum CodingKeys: String, CodingKey {
        case keyID = "key_id"
        case attestationObject = "attestation_object"
        case assertion
        case challenge
        case unsupported
    }

    /// The evidence of `attestation` and `assertion` (at most one of them).
    static func evidence(attestation: AppAttestBody?, assertion: AppAttestBody?) throws(CoreError) -> AppAttestEvidence?
    {
        switch (attestation, assertion) {
        case (nil, nil):
            return nil
        case (let body?, nil):
            if body.unsupported == true { return .unsupported }
            guard let keyID = body.keyID, let object = body.attestationObject, let challenge = body.challenge else {
                throw CoreError.invalidRequest(
                    "attestation needs key_id, attestation_object and challenge, or is {\"unsupported\": true}.")
            }
            return .attestation(
                keyID: AppAttestEvidence.bytes(base64: keyID), object: AppAttestEvidence.bytes(base64: object),
                challenge: AppAttestEvidence.challenge(challenge))
        case (nil, let body?):
            guard let keyID = body.keyID, let signed = body.assertion, let challenge = body.challenge else {
                throw CoreError.invalidRequest("assertion needs key_id, assertion and challenge.")
            }
            return .assertion(
                keyID: AppAttestEvidence.bytes(base64: keyID), assertion: AppAttestEvidence.bytes(base64: signed),
                challenge: AppAttestEvidence.challenge(challenge))
        case (_?, _?):
            throw CoreError.invalidRequest("Send at most one of attestation and assertion.")
        }
    }
}
