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

    /// The keys of proofs that verified, by their exact coordinates (nil: none kept); shared by copies.
    let keyCache: DPoPKeyCache?

    /// Creates a verifier.
    /// - Parameters:
    ///   - maximumClockSkew: how far `iat` may lie from `now`, either way.
    ///   - keyCacheCapacity: how many `jwk` keys to keep, validated and with their thumbprints, for
    ///     the next proof of the same key (0: none). Every proof's signature is verified whatever the
    ///     cache holds; it saves only reading the key again. Keys beyond the capacity push out the
    ///     least recently used half.
    public init(maximumClockSkew: TimeInterval = 60, keyCacheCapacity: Int = 1024) {
        self.maximumClockSkew = maximumClockSkew
        keyCache = keyCacheCapacity > 0 ? DPoPKeyCache(capacity: keyCacheCapacity) : nil
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
        let key = try Self.publicKey(jwk, cache: keyCache)
        guard jws.signature.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jws.signature),
            jws.withSigningInput({ key.key.isValidSignature(signature, for: $0) })
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
            guard let ath, Self.isHash(ath, of: accessToken) else {
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
        return DPoPProof(
            thumbprint: key.thumbprint, tokenID: jti, method: htm, url: htu, issuedAt: Date(timeIntervalSince1970: iat),
            accessTokenHash: ath, nonce: proofNonce, bodyHash: bodyHash)
    }

    /// The P-256 key of a `jwk` header and its RFC 7638 thumbprint: `kty` `EC`, `crv` `P-256`,
    /// canonical 32-byte `x` and `y` on the curve, and no private member. A key `cache` holds is not
    /// read again; only a valid one is put in it.
    static func publicKey(_ jwk: JSONObject, cache: DPoPKeyCache? = nil) throws(TokenError) -> DPoPKeyCache.Entry {
        let invalid = TokenError.Code.dpopProofInvalid
        for member in jwk.members {
            switch member.name {
            case "d", "p", "q", "dp", "dq", "qi", "k", "oth":
                throw TokenError(invalid, "The DPoP proof's jwk must not contain private key members.")
            default:
                continue
            }
        }
        guard case .string(let kty)? = jwk["kty"], kty == "EC", case .string(let crv)? = jwk["crv"], crv == "P-256"
        else {
            throw TokenError(invalid, "The DPoP proof's jwk must be an EC P-256 key.")
        }
        // x and y decoded straight into the key's uncompressed point (0x04 ‖ x ‖ y): 43 characters of
        // canonical base64url each, the only spelling of 32 bytes.
        guard case .string(let x)? = jwk["x"], case .string(let y)? = jwk["y"],
            let point = uncompressedPoint(x: x, y: y)
        else {
            throw TokenError(invalid, "The DPoP proof's jwk x and y must be a point on P-256.")
        }
        let coordinates = point.withUnsafeBytes { DPoPKeyCache.Coordinates(point: $0) }
        if let entry = cache?.entry(for: coordinates) { return entry }
        guard let key = try? P256.Signing.PublicKey(x963Representation: point) else {
            throw TokenError(invalid, "The DPoP proof's jwk x and y must be a point on P-256.")
        }
        // x and y decoded as canonical base64url of 32 bytes each, so they are the strings the key
        // would encode to: hashing them is the key's thumbprint, without exporting the key.
        let entry = DPoPKeyCache.Entry(key: key, thumbprint: JWKThumbprint.sha256(p256X: x, y: y))
        cache?.insert(entry, for: coordinates)
        return entry
    }

    /// `0x04 ‖ x ‖ y` from a `jwk`'s `x` and `y`, each canonical base64url of 32 bytes; nil otherwise.
    static func uncompressedPoint(x: String, y: String) -> [UInt8]? {
        var (x, y) = (x, y)
        guard x.utf8.count == 43, y.utf8.count == 43 else { return nil }
        var point = [UInt8](repeating: 0x04, count: 65)
        let valid = point.withUnsafeMutableBytes { point in
            let (xOut, yOut) = (
                UnsafeMutableRawBufferPointer(rebasing: point[1..<33]),
                UnsafeMutableRawBufferPointer(rebasing: point[33..<65])
            )
            return x.withUTF8 { Base64URL.decode(bytes: UnsafeRawBufferPointer($0), into: xOut) }
                && y.withUTF8 { Base64URL.decode(bytes: UnsafeRawBufferPointer($0), into: yOut) }
        }
        return valid ? point : nil
    }

    /// Whether `ath` is the base64url SHA-256 of `credential` (compared in constant time, the expected
    /// text written on the stack).
    static func isHash(_ ath: String, of credential: String) -> Bool {
        var (ath, credential) = (ath, credential)
        let digest = credential.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
        let length = Base64URL.encodedCount(SHA256.byteCount)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { expected in
            _ = digest.withUnsafeBytes { Base64URL.encode($0, into: expected) }
            return ath.withUTF8 { given in
                guard given.count == length else { return false }
                var difference: UInt8 = 0
                for index in 0..<length { difference |= given[index] ^ expected[index] }
                return difference == 0
            }
        }
    }

    /// 16 to 256 printable ASCII characters: room for ≥ 96 random bits in base64url.
    static func isTokenID(_ jti: String) -> Bool {
        (16...256).contains(jti.utf8.count) && jti.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// Whether a proof's `htu` names `url`: they are equal once each is normalised as
    /// ``normalizedURL(_:)`` says, compared in place, without building either normalised string.
    static func sameURL(_ claimed: String, _ url: String) -> Bool {
        var (claimed, url) = (claimed, url)
        return claimed.withUTF8 { claimedBytes in
            url.withUTF8 { urlBytes in
                guard let a = URLParts(claimedBytes), let b = URLParts(urlBytes), a.isHTTPS == b.isHTTPS,
                    a.authority.count == b.authority.count
                else { return false }
                for (left, right) in zip(a.authority, b.authority) where lowercased(left) != lowercased(right) {
                    return false
                }
                return a.hasPath(of: b)
            }
        }
    }

    /// `url` without query and fragment, with a lowercase scheme and host, the default port dropped
    /// and an empty path as `/` (RFC 9449 §4.3 and RFC 3986 §6.2.2–6.2.3); nil when it is not an
    /// absolute `http` or `https` URL of printable ASCII with a host and no user information.
    static func normalizedURL(_ url: String) -> String? {
        var url = url
        return url.withUTF8 { bytes in
            guard let parts = URLParts(bytes) else { return nil }
            let path = parts.path.isEmpty ? Array("/".utf8) : Array(parts.path)
            let text = Array((parts.isHTTPS ? "https://" : "http://").utf8) + parts.authority.map(lowercased) + path
            return String(decoding: text, as: UTF8.self)
        }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    /// An absolute `http` or `https` URL read in place: its scheme, its authority without the
    /// scheme's default port, and its path without query and fragment.
    private struct URLParts {
        var isHTTPS: Bool
        var authority: UnsafeBufferPointer<UInt8>.SubSequence
        var path: UnsafeBufferPointer<UInt8>.SubSequence

        /// Whether the paths are equal, an empty one counting as `/`.
        func hasPath(of other: URLParts) -> Bool {
            guard path.isEmpty != other.path.isEmpty else { return path.elementsEqual(other.path) }
            let given = path.isEmpty ? other.path : path
            return given.count == 1 && given.first == UInt8(ascii: "/")
        }

        init?(_ bytes: UnsafeBufferPointer<UInt8>) {
            let end = bytes.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
            let text = bytes[..<end]
            // The first "://" ends the scheme.
            var schemeEnd: Int?
            var index = text.startIndex
            while index + 3 <= text.endIndex {
                if text[index] == UInt8(ascii: ":"), text[index + 1] == UInt8(ascii: "/"),
                    text[index + 2] == UInt8(ascii: "/")
                {
                    schemeEnd = index
                    break
                }
                index += 1
            }
            guard let schemeEnd else { return nil }
            let scheme = text[..<schemeEnd].lazy.map(DPoPProofVerifier.lowercased)
            let isHTTPS: Bool
            if scheme.elementsEqual("https".utf8) {
                isHTTPS = true
            } else if scheme.elementsEqual("http".utf8) {
                isHTTPS = false
            } else {
                return nil
            }
            let rest = text[(schemeEnd + 3)...]
            let pathStart = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
            var authority = rest[..<pathStart]
            guard !authority.isEmpty, !authority.contains(UInt8(ascii: "@")) else { return nil }
            let defaultPort = isHTTPS ? ":443".utf8 : ":80".utf8
            if authority.count >= defaultPort.count,
                authority.suffix(defaultPort.count).elementsEqual(defaultPort)
            {
                authority = authority.dropLast(defaultPort.count)
            }
            let path = rest[pathStart...]
            let printable = { (byte: UInt8) in byte > 0x20 && byte < 0x7F }
            guard path.allSatisfy(printable), authority.allSatisfy(printable) else { return nil }
            self.isHTTPS = isHTTPS
            self.authority = authority
            self.path = path
        }
    }
}
