public import Foundation

/// The claims of a session JWT, the short-lived ES256 token a Tessera server issues with every session.
public struct SessionClaims: Sendable, Hashable, Codable {
    /// `iss`: the server's base URL.
    public var issuer: String
    /// `aud`: the project ID.
    public var audience: String
    /// `sub`: the profile ID.
    public var subject: String
    /// `sid`: the session ID.
    public var sessionID: String
    /// `exp`: five minutes after issue.
    public var expiration: Date
    /// `iat`.
    public var issuedAt: Date
    /// `nbf`.
    public var notBefore: Date
    /// `kind`: `anonymous`, `verified` or `unverified`.
    public var kind: String
    /// `external_id`: the app's user ID, or `nil` for an anonymous profile.
    public var externalID: String?
    /// `cnf.jkt` (RFC 9449 §6.1): the thumbprint of the device key the session is bound to; a
    /// request presenting the token must carry a DPoP proof signed by that key. Nil for a session
    /// that is not bound.
    public var confirmation: String?

    /// Creates claims.
    public init(
        issuer: String,
        audience: String,
        subject: String,
        sessionID: String,
        expiration: Date,
        issuedAt: Date,
        notBefore: Date,
        kind: String,
        externalID: String?,
        confirmation: String? = nil
    ) {
        self.issuer = issuer
        self.audience = audience
        self.subject = subject
        self.sessionID = sessionID
        self.expiration = expiration
        self.issuedAt = issuedAt
        self.notBefore = notBefore
        self.kind = kind
        self.externalID = externalID
        self.confirmation = confirmation
    }

    /// Reads the claims of a session JWT **without verifying its signature**.
    ///
    /// For a client that received the token from its server over TLS and wants to know when it
    /// expires. Never use this to make an authorization decision: use ``SessionKeyRing`` or
    /// ``SessionJWTVerifier``.
    public static func unverified(from token: some StringProtocol) throws(TokenError) -> SessionClaims {
        let jws = try CompactJWS.parse(String(token), malformed: .invalidToken)
        try jws.requireAlgorithm("ES256", malformed: .invalidToken)
        return try SessionClaims(payload: jws.payload)
    }

    init(payload: [UInt8]) throws(TokenError) {
        guard let object = StrictJSONReader.object(from: payload) else {
            throw TokenError(.invalidToken, "The payload is not a strict JSON object.")
        }
        func string(_ name: String) throws(TokenError) -> String {
            guard case .string(let value)? = object[name] else {
                throw TokenError(.invalidToken, "The \(name) claim must be a string.")
            }
            return value
        }
        func date(_ name: String) throws(TokenError) -> Date {
            guard case .number(let value)? = object[name] else {
                throw TokenError(.invalidToken, "The \(name) claim must be a number.")
            }
            return Date(timeIntervalSince1970: value)
        }
        let externalID: String?
        switch object["external_id"] {
        case nil, .null?: externalID = nil
        case .string(let value)?: externalID = value
        default: throw TokenError(.invalidToken, "The external_id claim must be a string or null.")
        }
        var confirmation: String?
        switch object["cnf"] {
        case nil: confirmation = nil
        case .object(let cnf)?:
            guard case .string(let jkt)? = cnf["jkt"] else {
                throw TokenError(.invalidToken, "The cnf claim must hold a jkt string.")
            }
            confirmation = jkt
        default: throw TokenError(.invalidToken, "The cnf claim must be an object.")
        }
        self.init(
            issuer: try string("iss"),
            audience: try string("aud"),
            subject: try string("sub"),
            sessionID: try string("sid"),
            expiration: try date("exp"),
            issuedAt: try date("iat"),
            notBefore: try date("nbf"),
            kind: try string("kind"),
            externalID: externalID,
            confirmation: confirmation
        )
    }

    /// Claims are equal when each claim is equal byte for byte: two strings that Swift's `==` calls
    /// equal by canonical equivalence (`é` and `e` + U+0301) are different claims in a token.
    public static func == (lhs: SessionClaims, rhs: SessionClaims) -> Bool {
        func same(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }
        let externalIDs: Bool
        switch (lhs.externalID, rhs.externalID) {
        case (nil, nil): externalIDs = true
        case (let a?, let b?): externalIDs = same(a, b)
        default: externalIDs = false
        }
        let confirmations: Bool
        switch (lhs.confirmation, rhs.confirmation) {
        case (nil, nil): confirmations = true
        case (let a?, let b?): confirmations = same(a, b)
        default: confirmations = false
        }
        return confirmations && same(lhs.sessionID, rhs.sessionID) && same(lhs.subject, rhs.subject)
            && same(lhs.audience, rhs.audience) && same(lhs.issuer, rhs.issuer) && same(lhs.kind, rhs.kind)
            && externalIDs && lhs.expiration == rhs.expiration && lhs.issuedAt == rhs.issuedAt
            && lhs.notBefore == rhs.notBefore
    }

    public func hash(into hasher: inout Hasher) {
        for byte in sessionID.utf8 { hasher.combine(byte) }
        hasher.combine(expiration)
    }

    func payloadBytes() -> [UInt8] {
        var writer = JSONWriter()
        writer.member("iss", issuer)
        writer.member("aud", audience)
        writer.member("sub", subject)
        writer.member("sid", sessionID)
        writer.member("exp", expiration.timeIntervalSince1970.numericDate)
        writer.member("iat", issuedAt.timeIntervalSince1970.numericDate)
        writer.member("nbf", notBefore.timeIntervalSince1970.numericDate)
        writer.member("kind", kind)
        if let externalID { writer.member("external_id", externalID) } else { writer.nullMember("external_id") }
        if let confirmation {
            var cnf = JSONWriter()
            cnf.member("jkt", confirmation)
            writer.member("cnf", json: cnf.finish())
        }
        return writer.finish()
    }

    private enum CodingKeys: String, CodingKey {
        case issuer = "iss"
        case audience = "aud"
        case subject = "sub"
        case sessionID = "sid"
        case expiration = "exp"
        case issuedAt = "iat"
        case notBefore = "nbf"
        case kind
        case externalID = "external_id"
        case confirmation = "cnf"
    }

    private struct Confirmation: Codable {
        var jkt: String
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        issuer = try container.decode(String.self, forKey: .issuer)
        audience = try container.decode(String.self, forKey: .audience)
        subject = try container.decode(String.self, forKey: .subject)
        sessionID = try container.decode(String.self, forKey: .sessionID)
        expiration = Date(timeIntervalSince1970: try container.decode(Double.self, forKey: .expiration))
        issuedAt = Date(timeIntervalSince1970: try container.decode(Double.self, forKey: .issuedAt))
        notBefore = Date(timeIntervalSince1970: try container.decode(Double.self, forKey: .notBefore))
        kind = try container.decode(String.self, forKey: .kind)
        externalID = try container.decodeIfPresent(String.self, forKey: .externalID)
        confirmation = try container.decodeIfPresent(Confirmation.self, forKey: .confirmation)?.jkt
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(issuer, forKey: .issuer)
        try container.encode(audience, forKey: .audience)
        try container.encode(subject, forKey: .subject)
        try container.encode(sessionID, forKey: .sessionID)
        try container.encode(expiration.timeIntervalSince1970.numericDate, forKey: .expiration)
        try container.encode(issuedAt.timeIntervalSince1970.numericDate, forKey: .issuedAt)
        try container.encode(notBefore.timeIntervalSince1970.numericDate, forKey: .notBefore)
        try container.encode(kind, forKey: .kind)
        try container.encode(externalID, forKey: .externalID)
        try container.encodeIfPresent(confirmation.map { Confirmation(jkt: $0) }, forKey: .confirmation)
    }
}
