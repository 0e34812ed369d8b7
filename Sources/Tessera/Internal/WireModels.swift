import Foundation

/// The answer of every call that creates or checks a session.
struct SessionEnvelope: Decodable, Sendable {
    var session: Session
    var sessionToken: String
    var sessionJWT: String
    var profile: Profile
    var capabilities: Capabilities
    var serverTime: Date
    var merge: Merge?

    enum CodingKeys: String, CodingKey {
        case session, profile, capabilities, merge
        case sessionToken = "session_token"
        case sessionJWT = "session_jwt"
        case serverTime = "server_time"
    }
}

struct MeResponse: Decodable, Sendable {
    var profile: Profile
    var capabilities: Capabilities
}

struct DeviceResponse: Decodable, Sendable {
    var device: Device
}

struct SessionsResponse: Decodable, Sendable {
    var sessions: [Session]
}

/// `POST /v1/sessions/revoke-others`: how many sessions it ended.
struct SessionsEndedResponse: Decodable, Sendable {
    var ended: Int
}

struct ErrorResponse: Decodable, Sendable {
    struct Body: Decodable, Sendable {
        var code: String
        var message: String?
        var reason: String?
    }
    var error: Body
}

struct AnonymousRequest: Encodable, Sendable {
    var installationID: String
    var installationSecret: String
    var sessionDurationMinutes: Int?
    /// Where the key of the request's proof lives (set by ``APIClient``).
    var keyTier: DeviceKeyTier?
    /// App Attest evidence: `attestation` or `assertion`.
    var evidence: AppAttestEvidence?

    enum CodingKeys: String, CodingKey {
        case installationID = "installation_id"
        case installationSecret = "installation_secret"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(installationID, forKey: .installationID)
        try container.encode(installationSecret, forKey: .installationSecret)
        try SessionRequestMember.encode(
            sessionDurationMinutes: sessionDurationMinutes, keyTier: keyTier, evidence: evidence, to: encoder)
    }
}

struct IdentifyRequest: Encodable, Sendable {
    var identityToken: String?
    var userID: String?
    var sessionDurationMinutes: Int?
    /// Where the key of the request's proof lives (set by ``APIClient``).
    var keyTier: DeviceKeyTier?
    /// App Attest evidence: `attestation` (a new key of the session's installation) or `assertion`.
    var evidence: AppAttestEvidence?

    enum CodingKeys: String, CodingKey {
        case identityToken = "identity_token"
        case userID = "user_id"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(identityToken, forKey: .identityToken)
        try container.encodeIfPresent(userID, forKey: .userID)
        try SessionRequestMember.encode(
            sessionDurationMinutes: sessionDurationMinutes, keyTier: keyTier, evidence: evidence, to: encoder)
    }
}

/// The members an anonymous start and an identify share, written beside each request's own: the
/// session's duration, where the key of the request's proof lives, and App Attest evidence.
private enum SessionRequestMember: String, CodingKey {
    case sessionDurationMinutes = "session_duration_minutes"
    case keyTier = "key_tier"

    static func encode(
        sessionDurationMinutes: Int?, keyTier: DeviceKeyTier?, evidence: AppAttestEvidence?, to encoder: any Encoder
    ) throws {
        var container = encoder.container(keyedBy: Self.self)
        try container.encodeIfPresent(sessionDurationMinutes, forKey: .sessionDurationMinutes)
        try container.encodeIfPresent(keyTier, forKey: .keyTier)
        try evidence?.encode(to: encoder)
    }
}

/// The App Attest member of a start or identify body (API.md, "Attested installations").
enum AppAttestEvidence: Encodable, Sendable, Equatable {
    /// `attestation: {key_id, attestation_object, challenge}`: a new key, at a start or identify.
    case attestation(keyID: String, object: Data, challenge: String)
    /// `assertion: {key_id, assertion, challenge}`: the installation's attested key.
    case assertion(keyID: String, assertion: Data, challenge: String)
    /// `attestation: {"unsupported": true}`: the device cannot attest.
    case unsupported

    private enum Member: String, CodingKey {
        case attestation, assertion
    }

    private enum Field: String, CodingKey {
        case keyID = "key_id"
        case attestationObject = "attestation_object"
        case assertion, challenge, unsupported
    }

    /// Encodes the member into the body's object (the caller encodes the body's other members).
    func encode(to encoder: any Encoder) throws {
        var body = encoder.container(keyedBy: Member.self)
        switch self {
        case .attestation(let keyID, let object, let challenge):
            var member = body.nestedContainer(keyedBy: Field.self, forKey: .attestation)
            try member.encode(keyID, forKey: .keyID)
            try member.encode(object.base64EncodedString(), forKey: .attestationObject)
            try member.encode(challenge, forKey: .challenge)
        case .assertion(let keyID, let assertion, let challenge):
            var member = body.nestedContainer(keyedBy: Field.self, forKey: .assertion)
            try member.encode(keyID, forKey: .keyID)
            try member.encode(assertion.base64EncodedString(), forKey: .assertion)
            try member.encode(challenge, forKey: .challenge)
        case .unsupported:
            var member = body.nestedContainer(keyedBy: Field.self, forKey: .attestation)
            try member.encode(true, forKey: .unsupported)
        }
    }
}

/// `POST /v1/attestations/challenge`.
struct AppAttestChallengeResponse: Decodable, Sendable {
    var challenge: String
}

struct AuthenticateRequest: Encodable, Sendable {
    var sessionDurationMinutes: Int?

    enum CodingKeys: String, CodingKey {
        case sessionDurationMinutes = "session_duration_minutes"
    }
}

struct DeviceRequest: Encodable, Sendable {
    var platform: PushPlatform
    var token: String
    var environment: PushEnvironment
}

struct EmptyBody: Encodable, Sendable {}

enum WireCoding {
    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = parseDate(text) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath, debugDescription: "not an RFC 3339 time"))
            }
            return date
        }
        return decoder
    }

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(formatDate(date))
        }
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    static func parseDate(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    static func formatDate(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
