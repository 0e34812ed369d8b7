public import Crypto
public import Foundation

/// A P-256 key that signs DPoP proofs: a software key, or on Apple devices one in the Secure Enclave
/// that never leaves it.
public protocol DPoPSigner: Sendable {
    /// The public key, published in every proof's `jwk` header.
    var publicKey: P256.Signing.PublicKey { get }
    /// An ECDSA P-256 signature over SHA-256 of `data`.
    func signature(for data: [UInt8]) throws -> P256.Signing.ECDSASignature
}

extension P256.Signing.PrivateKey: DPoPSigner {
    public func signature(for data: [UInt8]) throws -> P256.Signing.ECDSASignature {
        try signature(for: Data(data))
    }
}

/// Makes DPoP proofs (RFC 9449 §4.2) for requests: what a client sends in the `DPoP` header.
public enum DPoPProofBuilder {
    /// A proof for one request.
    /// - Parameters:
    ///   - signer: the device's key.
    ///   - method: the request's method (`htm`).
    ///   - url: the request URL; its query and fragment are dropped (`htu`).
    ///   - accessToken: the credential sent in `Authorization`, if any (`ath` is its hash).
    ///   - nonce: the server's latest `DPoP-Nonce`, if it asked for one.
    ///   - now: when the proof is made (`iat`, whole seconds); a client corrects its clock by the
    ///     server's time before it signs.
    ///   - tokenID: the proof's `jti`; 128 random bits by default.
    ///   - body: the request's body, if it has one: the proof then names its hash (`tessera_body`,
    ///     which a Tessera server requires where the body decides what a call does: an extension).
    public static func proof(
        signer: some DPoPSigner, method: String, url: String, accessToken: String? = nil, nonce: String? = nil,
        now: Date, tokenID: String = randomTokenID(), body: [UInt8]? = nil
    ) throws -> String {
        let point = Array(signer.publicKey.x963Representation)
        var jwk = JSONWriter()
        jwk.member("kty", "EC")
        jwk.member("crv", "P-256")
        jwk.member("x", Base64URL.encode(point[1..<33]))
        jwk.member("y", Base64URL.encode(point[33..<65]))
        var header = JSONWriter()
        header.member("typ", DPoPProofVerifier.proofType)
        header.member("alg", "ES256")
        header.member("jwk", json: jwk.finish())
        var claims = JSONWriter()
        claims.member("jti", tokenID)
        claims.member("htm", method)
        var htu = Substring(url)
        if let end = htu.firstIndex(where: { $0 == "?" || $0 == "#" }) { htu = htu[..<end] }
        claims.member("htu", String(htu))
        claims.member("iat", Int64(now.timeIntervalSince1970.rounded(.down)))
        if let accessToken { claims.member("ath", DPoPProof.accessTokenHash(of: accessToken)) }
        if let nonce { claims.member("nonce", nonce) }
        if let body { claims.member("tessera_body", DPoPProof.bodyHash(of: body)) }
        var token = Base64URL.encode(header.finish()) + "." + Base64URL.encode(claims.finish())
        let signature = try signer.signature(for: Array(token.utf8))
        token += "." + Base64URL.encode(signature.rawRepresentation)
        return token
    }

    /// 128 random bits in base64url.
    public static func randomTokenID() -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}
