import Crypto
public import Foundation

/// Verifies DPoP proofs (RFC 9449 §4.3) strictly, as the identity-token codec verifies tokens.
///
/// A proof is a compact JWS with `typ: dpop+jwt`, `alg: ES256` and the signer's P-256 public key in
/// its `jwk` header (no private members); its claims name the request (`htm`, `htu`), when it was
/// made (`iat`), a unique `jti`, the hash of the credential it accompanies (`ath`) and the server's
/// nonce when one is required. Only ES256 over P-256 is accepted.
///
/// The verifier is stateless: refusing a second use of a `jti` needs a store every node shares
/// (the Tessera server keeps one); an app backend that wants the same keeps the `jti`s it accepted
/// for the proof's window.
///
/// ```swift
/// let proof = try DPoPProofVerifier().verify(
///     dpopHeader, method: "GET", url: "https://api.example.com/orders",
///     accessToken: sessionJWT, now: Date())
/// let claims = try sessionVerifier.verify(sessionJWT, now: Date(), proof: proof)
/// ```
public struct DPoPProofVerifier: Sendable {
    /// The `typ` header of a DPoP proof.
    public static let proofType = "dpop+jwt"

    /// How far `iat` may lie from the verifier's clock, either way (RFC 9449 §11.1; default 60 s).
    public var maximumClockSkew: TimeInterval

    /// Creates a verifier.
    /// - Parameter maximumClockSkew: how far `iat` may lie from `now`, either way.
    public init(maximumClockSkew: TimeInterval = 60) {
        self.maximumClockSkew = maximumClockSkew
    }

    /// Verifies `proof` for one request and returns what it says.
    ///
    /// - Parameters:
    ///   - proof: the `DPoP` header's value.
    ///   - method: the request's method (`htm` must equal it exactly).
    ///   - url: the request URL as the server names it (its public URL and the path); compared with
    ///     `htu` after dropping query and fragment and normalising scheme, host and default port.
    ///   - accessToken: the credential the request presents in `Authorization`, if any: `ath` must
    ///     then be its hash, and must be absent otherwise.
    ///   - now: the verifier's clock.
    ///   - nonce: when the server requires nonces, whether the proof's `nonce` is one it issued and
    ///     still accepts; a proof without one, or with one refused, is ``TokenError/Code/useDPoPNonce``.
    /// - Throws: ``TokenError`` with ``TokenError/Code/dpopProofInvalid`` or
    ///   ``TokenError/Code/useDPoPNonce``; the message names the check, never the proof.
    public func verify(
        _ proof: some StringProtocol, method: String, url: String, accessToken: String? = nil, now: Date,
        nonce: ((String) -> Bool)? = nil
    ) throws(TokenError) -> DPoPProof {
        let invalid = TokenError.Code.dpopProofInvalid
        let jws = try CompactJWS.parse(String(proof), malformed: invalid, allowingKeyHeader: true)
        do {
            try jws.requireAlgorithm("ES256", malformed: invalid)
        } catch {
            throw TokenError(invalid, "A DPoP proof is signed with ES256.")
        }
        guard let typ = try jws.type(malformed: invalid), typ.utf8.elementsEqual(Self.proofType.utf8) else {
            throw TokenError(invalid, "A DPoP proof has typ \(Self.proofType).")
        }
        guard case .object(let jwk)? = jws.keyHeader else {
            throw TokenError(invalid, "A DPoP proof carries its public key in a jwk header object.")
        }
        let key = try Self.publicKey(jwk)
        guard jws.signature.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jws.signature),
            jws.withSigningInput({ key.isValidSignature(signature, for: $0) })
        else {
            throw TokenError(invalid, "The DPoP proof's signature does not verify with its jwk.")
        }
        guard let claims = StrictJSONReader.object(from: jws.payload) else {
            throw TokenError(invalid, "The DPoP proof's payload is not a strict JSON object.")
        }
        func string(_ name: String) throws(TokenError) -> String? {
            switch claims[name] {
            case nil: return nil
            case .string(let value)?: return value
            default: throw TokenError(invalid, "The DPoP proof's \(name) claim must be a string.")
            }
        }
        guard let jti = try string("jti"), Self.isTokenID(jti) else {
            throw TokenError(invalid, "The DPoP proof's jti must be 16 to 256 printable ASCII characters.")
        }
        guard let htm = try string("htm"), htm.utf8.elementsEqual(method.utf8) else {
            throw TokenError(invalid, "The DPoP proof's htm does not match the request's method.")
        }
        guard let htu = try string("htu"), Self.sameURL(htu, url) else {
            throw TokenError(invalid, "The DPoP proof's htu does not match the request's URL.")
        }
        guard case .number(let iat)? = claims["iat"], iat.isFinite, iat.rounded() == iat else {
            throw TokenError(invalid, "The DPoP proof's iat must be a whole number of seconds.")
        }
        guard abs(iat - now.timeIntervalSince1970) <= maximumClockSkew else {
            throw TokenError(
                invalid, "The DPoP proof's iat is more than \(Int(maximumClockSkew)) s from the server's time.")
        }
        let ath = try string("ath")
        if let accessToken {
            guard let ath,
                OpaqueToken.constantTimeEquals(Array(ath.utf8), Array(DPoPProof.accessTokenHash(of: accessToken).utf8))
            else {
                throw TokenError(invalid, "The DPoP proof's ath is not the hash of the credential it accompanies.")
            }
        } else if ath != nil {
            throw TokenError(invalid, "The DPoP proof has an ath but the request presents no credential.")
        }
        let proofNonce = try string("nonce")
        if let nonce {
            guard let proofNonce, nonce(proofNonce) else {
                throw TokenError(.useDPoPNonce, "The server requires a nonce it issued in the DPoP proof.")
            }
        }
        let bodyHash = try string("tessera_body")
        if let bodyHash, bodyHash.utf8.count != 43 {
            throw TokenError(invalid, "The DPoP proof's tessera_body must be a base64url SHA-256 (43 characters).")
        }
        // `publicKey` decoded x and y as canonical base64url of 32 bytes each, so they are the strings
        // the key would encode to: hashing them is the key's thumbprint, without exporting the key.
        guard case .string(let x)? = jwk["x"], case .string(let y)? = jwk["y"] else {
            throw TokenError(invalid, "The DPoP proof's jwk x and y must be a point on P-256.")
        }
        return DPoPProof(
            thumbprint: JWKThumbprint.sha256(requiredMembers: [("crv", "P-256"), ("kty", "EC"), ("x", x), ("y", y)]),
            tokenID: jti, method: htm, url: htu, issuedAt: Date(timeIntervalSince1970: iat), accessTokenHash: ath,
            nonce: proofNonce, bodyHash: bodyHash)
    }

    /// The P-256 key of a `jwk` header: `kty` `EC`, `crv` `P-256`, canonical 32-byte `x` and `y` on
    /// the curve, and no private member.
    static func publicKey(_ jwk: JSONObject) throws(TokenError) -> P256.Signing.PublicKey {
        let invalid = TokenError.Code.dpopProofInvalid
        for member in jwk.members where ["d", "p", "q", "dp", "dq", "qi", "k", "oth"].contains(member.name) {
            throw TokenError(invalid, "The DPoP proof's jwk must not contain private key members.")
        }
        guard case .string(let kty)? = jwk["kty"], kty == "EC", case .string(let crv)? = jwk["crv"], crv == "P-256"
        else {
            throw TokenError(invalid, "The DPoP proof's jwk must be an EC P-256 key.")
        }
        guard case .string(let x)? = jwk["x"], case .string(let y)? = jwk["y"], let xBytes = Base64URL.decode(x),
            let yBytes = Base64URL.decode(y), xBytes.count == 32, yBytes.count == 32,
            let key = try? P256.Signing.PublicKey(x963Representation: [0x04] + xBytes + yBytes)
        else {
            throw TokenError(invalid, "The DPoP proof's jwk x and y must be a point on P-256.")
        }
        return key
    }

    /// 16 to 256 printable ASCII characters: room for ≥ 96 random bits in base64url.
    static func isTokenID(_ jti: String) -> Bool {
        (16...256).contains(jti.utf8.count) && jti.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// Whether a proof's `htu` names `url`: their ``normalizedURL(_:)``s are equal. The same bytes (what
    /// every client that names the URL as the server does sends) need one normalisation, to know the
    /// URL is valid, rather than two.
    static func sameURL(_ claimed: String, _ url: String) -> Bool {
        if claimed.utf8.elementsEqual(url.utf8) { return normalizedURL(claimed) != nil }
        guard let claimed = normalizedURL(claimed), let expected = normalizedURL(url) else { return false }
        return claimed.utf8.elementsEqual(expected.utf8)
    }

    /// `url` without query and fragment, with a lowercase scheme and host, the default port dropped
    /// and an empty path as `/` (RFC 9449 §4.3 and RFC 3986 §6.2.2–6.2.3); nil when it is not an
    /// absolute `http` or `https` URL.
    static func normalizedURL(_ url: String) -> String? {
        var text = Substring(url)
        if let end = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = text[..<end] }
        guard let schemeEnd = text.range(of: "://") else { return nil }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "https" || scheme == "http" else { return nil }
        let rest = text[schemeEnd.upperBound...]
        let pathStart = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<pathStart].lowercased()
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        let defaultPort = scheme == "https" ? ":443" : ":80"
        if authority.hasSuffix(defaultPort) { authority.removeLast(defaultPort.count) }
        let path = rest[pathStart...]
        guard path.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), authority.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return nil }
        return scheme + "://" + authority + (path.isEmpty ? "/" : String(path))
    }
}
