import Crypto
import Foundation
import Testing

@testable import TesseraTokens

/// DPoP proofs (RFC 9449) and JWK thumbprints (RFC 7638): the RFCs' own examples, the builder's
/// proofs, every check of the verifier, and session JWTs bound to a key (`cnf.jkt`).
@Suite("DPoP proofs and JWK thumbprints")
struct DPoPTests {
    /// RFC 9449 §4.1, figure 2 (RFC 8792 line folding undone): a proof for a token request.
    static let rfcTokenRequestProof =
        "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Imw4dEZyaHgtMzR0VjNoUklDUkRZOXpDa0RscEJoRjQyVVFVZldWQVdCRnMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFqSG10NnY5VERWclUwQ2R2R1JEQSIsImNydiI6IlAtMjU2In19"
        + ".eyJqdGkiOiItQndDM0VTYzZhY2MybFRjIiwiaHRtIjoiUE9TVCIsImh0dSI6Imh0dHBzOi8vc2VydmVyLmV4YW1wbGUuY29tL3Rva2VuIiwiaWF0IjoxNTYyMjYyNjE2fQ"
        + ".2-GxA6T8lP4vfrg8v-FdWP0A0zdrj8igiMLvqRMUvwnQg4PtFLbdLXiOSsX0x7NVY-FNyJK70nfbV37xRZT3Lg"
    /// RFC 9449 §7.1, figure 13: a proof for a protected resource, with `ath`.
    static let rfcResourceProof =
        "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Imw4dEZyaHgtMzR0VjNoUklDUkRZOXpDa0RscEJoRjQyVVFVZldWQVdCRnMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFqSG10NnY5VERWclUwQ2R2R1JEQSIsImNydiI6IlAtMjU2In19"
        + ".eyJqdGkiOiJlMWozVl9iS2ljOC1MQUVCIiwiaHRtIjoiR0VUIiwiaHR1IjoiaHR0cHM6Ly9yZXNvdXJjZS5leGFtcGxlLm9yZy9wcm90ZWN0ZWRyZXNvdXJjZSIsImlhdCI6MTU2MjI2MjYxOCwiYXRoIjoiZlVIeU8ycjJaM0RaNTNFc05yV0JiMHhXWG9hTnk1OUlpS0NBcWtzbVFFbyJ9"
        + ".2oW9RP35yRqzhrtNP86L-Ey71EOptxRimPPToA1plemAgR6pxHF8y6-yqyVnmcw6Fy1dqd-jfxSYoMxhAJpLjA"
    /// The access token of figure 13, and the thumbprint of the RFC's key (figures 8 and 9).
    static let rfcAccessToken = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"
    static let rfcThumbprint = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"

    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let url = "https://tessera.test/v1/sessions/heartbeat"
    let key = P256.Signing.PrivateKey()

    @Test("RFC 9449 §4.1's example proof verifies, with the RFC's jti, claims and key thumbprint")
    func rfcTokenRequest() throws {
        let proof = try DPoPProofVerifier().verify(
            Self.rfcTokenRequestProof, method: "POST", url: "https://server.example.com/token",
            now: Date(timeIntervalSince1970: 1_562_262_616))
        #expect(proof.tokenID == "-BwC3ESc6acc2lTc")
        #expect(proof.thumbprint == Self.rfcThumbprint)
        #expect(proof.accessTokenHash == nil && proof.nonce == nil)
        // One second outside the window on either side, and it is refused.
        for offset in [-61.0, 61.0] {
            expectCode(.dpopProofInvalid) {
                _ = try DPoPProofVerifier().verify(
                    Self.rfcTokenRequestProof, method: "POST", url: "https://server.example.com/token",
                    now: Date(timeIntervalSince1970: 1_562_262_616 + offset))
            }
        }
    }

    @Test("RFC 9449 §7.1's resource proof verifies with its access token, and only with it")
    func rfcResourceRequest() throws {
        let now = Date(timeIntervalSince1970: 1_562_262_618)
        let url = "https://resource.example.org/protectedresource"
        let proof = try DPoPProofVerifier().verify(
            Self.rfcResourceProof, method: "GET", url: url, accessToken: Self.rfcAccessToken, now: now)
        #expect(proof.accessTokenHash == "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo")
        #expect(DPoPProof.accessTokenHash(of: Self.rfcAccessToken) == proof.accessTokenHash)
        #expect(proof.thumbprint == Self.rfcThumbprint)
        expectCode(.dpopProofInvalid) {
            _ = try DPoPProofVerifier().verify(
                Self.rfcResourceProof, method: "GET", url: url, accessToken: Self.rfcAccessToken + "x", now: now)
        }
        expectCode(.dpopProofInvalid) {
            _ = try DPoPProofVerifier().verify(Self.rfcResourceProof, method: "GET", url: url, now: now)
        }
    }

    @Test("RFC 7638 §3.1's example thumbprint, and P-256 thumbprints ignore member order")
    func rfc7638Thumbprint() {
        let n =
            "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
        #expect(
            JWKThumbprint.sha256(requiredMembers: [("kty", "RSA"), ("n", n), ("e", "AQAB")])
                == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
        #expect(
            JWKThumbprint.sha256(requiredMembers: [
                ("y", "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA"),
                ("x", "l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs"),
                ("kty", "EC"), ("crv", "P-256"),
            ]) == Self.rfcThumbprint)
    }

    @Test("A built proof verifies and names its key, its request and its credential")
    func roundTrip() throws {
        let proof = try DPoPProofBuilder.proof(
            signer: key, method: "POST", url: Self.url + "?q=1#f", accessToken: "ses_token", nonce: "n1",
            now: Self.now)
        let verified = try DPoPProofVerifier().verify(
            proof, method: "POST", url: "HTTPS://Tessera.TEST:443/v1/sessions/heartbeat", accessToken: "ses_token",
            now: Self.now.addingTimeInterval(59), nonce: { $0 == "n1" })
        #expect(verified.thumbprint == JWKThumbprint.sha256(of: key.publicKey))
        #expect(verified.url == Self.url && verified.method == "POST" && verified.nonce == "n1")
        #expect(verified.issuedAt == Self.now)
        #expect(verified.tokenID.utf8.count >= 16)
        let second = try DPoPProofBuilder.proof(signer: key, method: "POST", url: Self.url, now: Self.now)
        #expect(
            try DPoPProofVerifier().verify(second, method: "POST", url: Self.url, now: Self.now).tokenID
                != verified.tokenID)
    }

    @Test("A proof names the body it goes with (tessera_body), and none without one")
    func bodyHash() throws {
        let body = Array(#"{"session_duration_minutes":60}"#.utf8)
        let proof = try DPoPProofBuilder.proof(signer: key, method: "POST", url: Self.url, now: Self.now, body: body)
        let verified = try DPoPProofVerifier().verify(proof, method: "POST", url: Self.url, now: Self.now)
        #expect(verified.bodyHash == DPoPProof.bodyHash(of: body))
        #expect(DPoPProof.bodyHash(of: Array("abc".utf8)) == "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0")
        let bare = try DPoPProofBuilder.proof(signer: key, method: "POST", url: Self.url, now: Self.now)
        #expect(try DPoPProofVerifier().verify(bare, method: "POST", url: Self.url, now: Self.now).bodyHash == nil)
    }

    @Test("Every check refuses: method, URL, iat, ath, nonce, jti, typ, alg, key, signature")
    func refusals() throws {
        let verifier = DPoPProofVerifier()
        func proof(
            method: String = "POST", url: String = Self.url, token: String? = "tok", nonce: String? = nil,
            at now: Date = Self.now, jti: String = DPoPProofBuilder.randomTokenID()
        ) throws -> String {
            try DPoPProofBuilder.proof(
                signer: key, method: method, url: url, accessToken: token, nonce: nonce, now: now, tokenID: jti)
        }
        func verify(_ proof: String, token: String? = "tok", nonce: ((String) -> Bool)? = nil) throws {
            _ = try verifier.verify(
                proof, method: "POST", url: Self.url, accessToken: token, now: Self.now, nonce: nonce)
        }
        try verify(try proof())
        expectCode(.dpopProofInvalid) { try verify(try proof(method: "GET")) }
        expectCode(.dpopProofInvalid) { try verify(try proof(method: "post")) }
        expectCode(.dpopProofInvalid) { try verify(try proof(url: "https://tessera.test/v1/sessions/extend")) }
        expectCode(.dpopProofInvalid) { try verify(try proof(url: "https://evil.test/v1/sessions/heartbeat")) }
        expectCode(.dpopProofInvalid) { try verify(try proof(url: "http://tessera.test/v1/sessions/heartbeat")) }
        expectCode(.dpopProofInvalid) { try verify(try proof(at: Self.now.addingTimeInterval(-61))) }
        expectCode(.dpopProofInvalid) { try verify(try proof(at: Self.now.addingTimeInterval(61))) }
        expectCode(.dpopProofInvalid) { try verify(try proof(token: "other")) }
        expectCode(.dpopProofInvalid) { try verify(try proof(token: nil)) }
        expectCode(.dpopProofInvalid) { try verify(try proof(token: "tok"), token: nil) }
        expectCode(.dpopProofInvalid) { try verify(try proof(jti: "short")) }
        expectCode(.useDPoPNonce) { try verify(try proof(), nonce: { _ in true }) }
        expectCode(.useDPoPNonce) { try verify(try proof(nonce: "old"), nonce: { $0 == "new" }) }
        try verify(try proof(nonce: "new"), nonce: { $0 == "new" })

        // Hand-made headers: each signed properly by `key`, so only the named defect is wrong.
        let point = Array(key.publicKey.x963Representation)
        let x = Base64URL.encode(point[1..<33])
        let y = Base64URL.encode(point[33..<65])
        let jwk = #"{"kty":"EC","crv":"P-256","x":"\#(x)","y":"\#(y)"}"#
        let claims =
            #"{"jti":"abcdefghijklmnopqrstuv","htm":"POST","htu":"\#(Self.url)","iat":1800000000,"ath":"\#(DPoPProof.accessTokenHash(of: "tok"))"}"#
        func signed(_ header: String, _ payload: String = claims, by signer: P256.Signing.PrivateKey? = nil) throws
            -> String
        {
            let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
            let signature = try (signer ?? key).signature(for: Array(input.utf8))
            return input + "." + Base64URL.encode(signature.rawRepresentation)
        }
        try verify(try signed(#"{"typ":"dpop+jwt","alg":"ES256","jwk":\#(jwk)}"#))
        // A tessera_body that is not a base64url SHA-256.
        let shortBody = String(claims.dropLast()) + #","tessera_body":"short"}"#
        expectCode(.dpopProofInvalid) {
            try verify(try signed(#"{"typ":"dpop+jwt","alg":"ES256","jwk":\#(jwk)}"#, shortBody))
        }
        expectCode(.dpopProofInvalid) { try verify(try signed(#"{"typ":"JWT","alg":"ES256","jwk":\#(jwk)}"#)) }
        expectCode(.dpopProofInvalid) { try verify(try signed(#"{"alg":"ES256","jwk":\#(jwk)}"#)) }
        expectCode(.dpopProofInvalid) { try verify(try signed(#"{"typ":"dpop+jwt","alg":"ES384","jwk":\#(jwk)}"#)) }
        expectCode(.dpopProofInvalid) { try verify(try signed(#"{"typ":"dpop+jwt","alg":"none","jwk":\#(jwk)}"#)) }
        expectCode(.dpopProofInvalid) { try verify(try signed(#"{"typ":"dpop+jwt","alg":"ES256"}"#)) }
        let withPrivate = #"{"kty":"EC","crv":"P-256","x":"\#(x)","y":"\#(y)","d":"AAAA"}"#
        expectCode(.dpopProofInvalid) {
            try verify(try signed(#"{"typ":"dpop+jwt","alg":"ES256","jwk":\#(withPrivate)}"#))
        }
        let wrongCurve = #"{"kty":"EC","crv":"P-384","x":"\#(x)","y":"\#(y)"}"#
        expectCode(.dpopProofInvalid) {
            try verify(try signed(#"{"typ":"dpop+jwt","alg":"ES256","jwk":\#(wrongCurve)}"#))
        }
        let offCurve = #"{"kty":"EC","crv":"P-256","x":"\#(x)","y":"\#(x)"}"#
        expectCode(.dpopProofInvalid) {
            try verify(try signed(#"{"typ":"dpop+jwt","alg":"ES256","jwk":\#(offCurve)}"#))
        }
        // Signed by another key than the one it names.
        expectCode(.dpopProofInvalid) {
            try verify(try signed(#"{"typ":"dpop+jwt","alg":"ES256","jwk":\#(jwk)}"#, by: P256.Signing.PrivateKey()))
        }
        // A header that lets the proof choose a key by reference is never read.
        expectCode(.dpopProofInvalid) {
            try verify(try signed(#"{"typ":"dpop+jwt","alg":"ES256","jwk":\#(jwk),"jku":"https://evil.test"}"#))
        }
        let fractional = claims.replacingOccurrences(of: "1800000000", with: "1800000000.5")
        expectCode(.dpopProofInvalid) {
            try verify(try signed(#"{"typ":"dpop+jwt","alg":"ES256","jwk":\#(jwk)}"#, fractional))
        }
    }

    @Test("The jwk's x and y are read only as canonical base64url of exactly 32 bytes each")
    func jwkCoordinateSpelling() throws {
        let point = Array(key.publicKey.x963Representation)
        let x = Base64URL.encode(point[1..<33])
        let y = Base64URL.encode(point[33..<65])
        #expect(DPoPProofVerifier.uncompressedPoint(x: x, y: y) == point)
        // The last character of 32 bytes carries two unused bits: set, they spell the same bytes
        // another way, which is refused.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let last = alphabet.firstIndex(of: x.last!)!
        let loose = String(x.dropLast()) + String(alphabet[last | 1])
        #expect(last & 3 == 0 && Base64URL.decode(loose) == nil)
        for (badX, badY) in [
            (loose, y), (x, String(y.dropLast())), (x, y + "A"), (String(x.dropLast()) + "=", y),
            (x.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/"), y),
            (Base64URL.encode(point[1..<32]), y), (Base64URL.encode(point[1..<33] + [0]), y), ("", y),
        ] where badX != x || badY != y {
            #expect(DPoPProofVerifier.uncompressedPoint(x: badX, y: badY) == nil, "\(badX) \(badY)")
            let jwk = DPoPTests.jwkObject(x: badX, y: badY)
            #expect(throws: TokenError.self) { _ = try DPoPProofVerifier.publicKey(jwk) }
        }
        let entry = try DPoPProofVerifier.publicKey(DPoPTests.jwkObject(x: x, y: y))
        #expect(entry.thumbprint == JWKThumbprint.sha256(of: key.publicKey))
        #expect(entry.key.x963Representation == key.publicKey.x963Representation)
    }

    static func jwkObject(x: String, y: String) -> JSONObject {
        JSONObject(members: [
            (name: "kty", value: .string("EC")), ("crv", .string("P-256")), ("x", .string(x)), ("y", .string(y)),
        ])
    }

    @Test("Base64URL in place: decode into a buffer and encode into a string give what the array forms give")
    func base64URLInPlace() {
        for count in 0..<40 {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let text = Base64URL.encode(bytes)
            #expect(bytes.withUnsafeBytes { Base64URL.string($0) } == text)
            #expect(Base64URL.encodedCount(count) == text.utf8.count)
            #expect(Base64URL.decodedCount(text.utf8.count) == count)
            var out = [UInt8](repeating: 0, count: count)
            let decoded = Array(text.utf8).withUnsafeBytes { input in
                out.withUnsafeMutableBytes { Base64URL.decode(bytes: input, into: $0) }
            }
            #expect(decoded && out == bytes)
            // A buffer of another size is refused, not overrun.
            var short = [UInt8](repeating: 0, count: max(0, count - 1))
            let refused = Array(text.utf8).withUnsafeBytes { input in
                short.withUnsafeMutableBytes { Base64URL.decode(bytes: input, into: $0) }
            }
            #expect(count == 0 || !refused)
        }
        #expect(Base64URL.decodedCount(5) == nil)
    }

    @Test("A session JWT bound to a key is accepted only with a proof of that key, made for that token")
    func boundSessionJWT() throws {
        let signing = SessionSigningKey.generate()
        let ring = try SessionKeyRing(signingKey: signing)
        let jkt = JWKThumbprint.sha256(of: key.publicKey)
        let claims = SessionClaims(
            issuer: "https://tessera.test", audience: "prj_1", subject: "usr_1", sessionID: "ses_1",
            expiration: Self.now.addingTimeInterval(300), issuedAt: Self.now, notBefore: Self.now, kind: "anonymous",
            externalID: nil, confirmation: jkt)
        let token = ring.sign(claims)
        let verifier = try SessionJWTVerifier(jwks: ring.jwks)
        func proof(by signer: P256.Signing.PrivateKey, for credential: String = token) throws -> DPoPProof {
            try DPoPProofVerifier().verify(
                try DPoPProofBuilder.proof(
                    signer: signer, method: "GET", url: "https://api.test/orders", accessToken: credential,
                    now: Self.now), method: "GET", url: "https://api.test/orders", accessToken: credential,
                now: Self.now)
        }
        let accepted = try verifier.verify(token, now: Self.now, proof: try proof(by: key))
        #expect(accepted.confirmation == jkt)
        #expect(try SessionClaims.unverified(from: token) == claims, "cnf round-trips")
        expectCode(.dpopProofRequired) { _ = try verifier.verify(token, now: Self.now, proof: nil) }
        expectCode(.dpopKeyMismatch) {
            _ = try verifier.verify(token, now: Self.now, proof: try proof(by: P256.Signing.PrivateKey()))
        }
        expectCode(.dpopProofInvalid) {
            _ = try verifier.verify(token, now: Self.now, proof: try proof(by: key, for: "another-token"))
        }
        // An unbound token needs no proof.
        var unbound = claims
        unbound.confirmation = nil
        #expect(try verifier.verify(ring.sign(unbound), now: Self.now, proof: nil).confirmation == nil)
        // Codable carries cnf too.
        let decoded = try JSONDecoder().decode(SessionClaims.self, from: try JSONEncoder().encode(claims))
        #expect(decoded.confirmation == jkt)
    }
}
