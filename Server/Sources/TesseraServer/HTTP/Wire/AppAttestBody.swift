/// The `attestation` or `assertion` member of a start or identify body.
///
/// Members are strings (base64 for `key_id`, `attestation_object` and `assertion`; base64url for
/// `challenge`); a missing, empty or over-long one is `400 invalid_request` whatever the project's
/// mode (the contract's limits keep a start's body under 16 KiB); bytes that do not decode are
/// judged by the App Attest gate (`attestation_invalid`, reason `format`, or `challenge_invalid`).
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

    /// The longest `key_id` and `challenge`.
    static let maximumShortLength = 128
    /// The longest `attestation_object` (real ones are 6 to 8 KB in base64).
    static let maximumAttestationLength = 12_288
    /// The longest `assertion` (real ones are about 200 bytes in base64).
    static let maximumAssertionLength = 4_096

    /// `value` when it is 1 to `limit` bytes long; `400 invalid_request` otherwise.
    private static func member(_ value: String?, _ name: String, limit: Int) throws(CoreError) -> String? {
        guard let value else { return nil }
        guard !value.isEmpty, value.utf8.count <= limit else {
            throw CoreError.invalidRequest("\(name) must be 1 to \(limit) characters.")
        }
        return value
    }

    /// The evidence of `attestation` and `assertion` (at most one of them).
    static func evidence(attestation: AppAttestBody?, assertion: AppAttestBody?) throws(CoreError) -> AppAttestEvidence?
    {
        switch (attestation, assertion) {
        case (nil, nil):
            return nil
        case (let body?, nil):
            if body.unsupported == true { return .unsupported }
            guard let keyID = try member(body.keyID, "attestation.key_id", limit: maximumShortLength),
                let object = try member(
                    body.attestationObject, "attestation.attestation_object", limit: maximumAttestationLength),
                let challenge = try member(body.challenge, "attestation.challenge", limit: maximumShortLength)
            else {
                throw CoreError.invalidRequest(
                    "attestation needs key_id, attestation_object and challenge, or is {\"unsupported\": true}.")
            }
            return .attestation(
                keyID: AppAttestEvidence.bytes(base64: keyID), object: AppAttestEvidence.bytes(base64: object),
                challenge: AppAttestEvidence.challenge(challenge))
        case (nil, let body?):
            guard let keyID = try member(body.keyID, "assertion.key_id", limit: maximumShortLength),
                let signed = try member(body.assertion, "assertion.assertion", limit: maximumAssertionLength),
                let challenge = try member(body.challenge, "assertion.challenge", limit: maximumShortLength)
            else {
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
