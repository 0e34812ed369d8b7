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
    }
    var error: Body
}

struct AnonymousRequest: Encodable, Sendable {
    var installationID: String
    var installationSecret: String
    var sessionDurationMinutes: Int?
    /// Where the key of the request's proof lives (set by ``APIClient``).
    var keyTier: DeviceKeyTier?

    enum CodingKeys: String, CodingKey {
        case installationID = "installation_id"
        case installationSecret = "installation_secret"
        case sessionDurationMinutes = "session_duration_minutes"
        case keyTier = "key_tier"
    }
}

struct IdentifyRequest: Encodable, Sendable {
    var identityToken: String?
    var userID: String?
    var sessionDurationMinutes: Int?
    /// Where the key of the request's proof lives (set by ``APIClient``).
    var keyTier: DeviceKeyTier?

    enum CodingKeys: String, CodingKey {
        case identityToken = "identity_token"
        case userID = "user_id"
        case sessionDurationMinutes = "session_duration_minutes"
        case keyTier = "key_tier"
    }
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
