import Crypto
public import Foundation

/// A project's session-JWT keys: one that signs, and the retired ones that still verify.
///
/// Rotation: make a ring with a new signing key and the old key's public JWK in `retiredKeys`;
/// keep the old key listed until every JWT it signed has expired (five minutes plus leeway).
public struct SessionKeyRing: Sendable {
    private let signingKey: SessionSigningKey
    /// The base64url header followed by the `.` that starts the payload.
    private let headerPrefix: [UInt8]
    private let verifier: ES256Verifier

    /// The `kid` of the key that signs new tokens.
    public var signingKeyID: String { signingKey.kid }

    /// The public keys, current first, as published at `/v1/projects/{id}/jwks.json`.
    public let jwks: JSONWebKeySet

    /// Creates a ring.
    /// - Parameters:
    ///   - signingKey: the key that signs new tokens.
    ///   - retiredKeys: public keys of earlier signing keys whose tokens may still be in use.
    public init(signingKey: SessionSigningKey, retiredKeys: [JSONWebKey] = []) throws(KeyConfigurationError) {
        let keys = [signingKey.publicJWK] + retiredKeys
        self.verifier = try ES256Verifier(keys: keys)
        self.signingKey = signingKey
        self.jwks = JSONWebKeySet(keys: keys)
        var header = JSONWriter()
        header.member("alg", "ES256")
        header.member("kid", signingKey.kid)
        header.member("typ", ES256Verifier.tokenType)
        self.headerPrefix = Array(Base64URL.encode(header.finish()).utf8) + [UInt8(ascii: ".")]
    }

    /// Signs `claims` as a compact session JWT.
    public func sign(_ claims: SessionClaims) -> String {
        // Built as bytes and hashed once: this runs on every session the server answers with.
        var token = headerPrefix
        token.reserveCapacity(512)
        claims.payloadBytes().withUnsafeBytes { Base64URL.append($0, to: &token) }
        let digest = SHA256.hash(data: token)
        // Signing a SHA-256 digest with a valid P-256 key cannot fail.
        let signature = try! signingKey.privateKey.signature(for: digest)
        token.append(UInt8(ascii: "."))
        signature.rawRepresentation.withUnsafeBytes { Base64URL.append($0, to: &token) }
        return String(decoding: token, as: UTF8.self)
    }

    /// Verifies a session JWT signed by this ring.
    ///
    /// `alg` must be ES256 (an HS256 token MACed with a public key is refused as
    /// `unsupported_algorithm`), the `kid` known, `typ` `session+jwt`, the signature valid.
    /// - Parameters:
    ///   - token: the compact JWS.
    ///   - now: the current time.
    ///   - leeway: clock-skew allowance for `exp` and `nbf`, in seconds.
    ///   - allowExpired: accept a token whose `exp` has passed (the authenticate exchange).
    public func verify(
        _ token: some StringProtocol,
        now: Date,
        leeway: TimeInterval = 60,
        allowExpired: Bool = false
    ) throws(TokenError) -> SessionClaims {
        try verifier.verify(String(token), now: now, leeway: leeway, allowExpired: allowExpired)
    }
}
