import Crypto
import Foundation

/// Verifies ES256 session JWTs against a set of public keys; shared by the key ring and the JWKS verifier.
struct ES256Verifier: Sendable {
    static let tokenType = "session+jwt"

    private let keys: [(kid: String, key: P256.Signing.PublicKey)]

    init(keys: [JSONWebKey]) throws(KeyConfigurationError) {
        var resolved: [(kid: String, key: P256.Signing.PublicKey)] = []
        for jwk in keys {
            guard !resolved.contains(where: { $0.kid == jwk.kid }) else {
                throw KeyConfigurationError("Duplicate kid \(jwk.kid).")
            }
            resolved.append((jwk.kid, try jwk.publicKey()))
        }
        self.keys = resolved
    }

    func verify(
        _ token: String,
        now: Date,
        leeway: TimeInterval,
        allowExpired: Bool
    ) throws(TokenError) -> SessionClaims {
        let claims = try SessionClaims(payload: try verifiedPayload(token, requireType: true))
        let seconds = now.timeIntervalSince1970
        if !allowExpired, seconds >= claims.expiration.timeIntervalSince1970 + leeway {
            throw TokenError(.tokenExpired, "The session JWT has expired.")
        }
        if claims.notBefore.timeIntervalSince1970 > seconds + leeway {
            throw TokenError(.tokenNotYetValid, "The session JWT is not valid yet.")
        }
        return claims
    }

    /// The JWS layer alone: structure, header, signature. Returns the payload bytes, not yet parsed.
    func verifiedPayload(_ token: String, requireType: Bool) throws(TokenError) -> [UInt8] {
        let jws = try CompactJWS.parse(token, malformed: .invalidToken)
        do {
            try jws.requireAlgorithm("ES256", malformed: .invalidToken)
            let typ = try jws.type(malformed: .invalidToken)
            if requireType, !(typ?.utf8.elementsEqual(Self.tokenType.utf8) ?? false) {
                throw TokenError(.invalidToken, "A session JWT has typ \(Self.tokenType).")
            }
            guard let kid = jws.keyID else { throw TokenError(.invalidToken, "A session JWT names its kid.") }
            guard let entry = keys.first(where: { $0.kid == kid }) else {
                throw TokenError(.invalidSignature, "The kid names no known session key.")
            }
            guard jws.signature.count == 64,
                let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jws.signature),
                jws.withSigningInput({ entry.key.isValidSignature(signature, for: $0) })
            else {
                throw TokenError(.invalidSignature, "The signature does not verify.")
            }
        }
        return jws.payload
    }
}
