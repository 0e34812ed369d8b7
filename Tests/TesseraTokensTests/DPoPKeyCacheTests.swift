import Crypto
import Foundation
import Testing

@testable import TesseraTokens

/// The verifier's cache of `jwk` keys (``DPoPKeyCache``) and its `htu` comparison in place: what
/// they save must change no answer of the verifier.
@Suite("DPoP key cache and htu comparison")
struct DPoPKeyCacheTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let url = "https://tessera.test/v1/sessions/authenticate"

    func proof(by key: P256.Signing.PrivateKey, token: String = "st_tok") throws -> String {
        try DPoPProofBuilder.proof(signer: key, method: "POST", url: Self.url, accessToken: token, now: Self.now)
    }

    func verify(_ proof: String, with verifier: DPoPProofVerifier, token: String = "st_tok") throws -> DPoPProof {
        try verifier.verify(proof, method: "POST", url: Self.url, accessToken: token, now: Self.now)
    }

    /// A proof whose header carries `jwk` but whose signature is by `signer`.
    func proof(jwkOf named: P256.Signing.PublicKey, signedBy signer: P256.Signing.PrivateKey) throws -> String {
        let point = Array(named.x963Representation)
        let jwk =
            #"{"kty":"EC","crv":"P-256","x":"\#(Base64URL.encode(point[1..<33]))","y":"\#(Base64URL.encode(point[33..<65]))"}"#
        let header = #"{"typ":"dpop+jwt","alg":"ES256","jwk":\#(jwk)}"#
        let claims =
            #"{"jti":"\#(DPoPProofBuilder.randomTokenID())","htm":"POST","htu":"\#(Self.url)","iat":1800000000,"ath":"\#(DPoPProof.accessTokenHash(of: "st_tok"))"}"#
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        return input + "." + Base64URL.encode(try signer.signature(for: Array(input.utf8)).rawRepresentation)
    }

    /// The private key `n - d`: its public key is the same `x` with the other `y` (the point's negation).
    static func negated(_ key: P256.Signing.PrivateKey) throws -> P256.Signing.PrivateKey {
        let order: [UInt8] = [
            0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
            0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
        ]
        let scalar = Array(key.rawRepresentation)
        var result = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in (0..<32).reversed() {
            var difference = Int(order[index]) - Int(scalar[index]) - borrow
            borrow = difference < 0 ? 1 : 0
            if difference < 0 { difference += 256 }
            result[index] = UInt8(difference)
        }
        return try P256.Signing.PrivateKey(rawRepresentation: result)
    }

    @Test("A cached key gives the same proof as a fresh read, and still verifies every signature")
    func cachedKeyStillVerifies() throws {
        let key = P256.Signing.PrivateKey()
        let cached = DPoPProofVerifier(keyCacheCapacity: 16)
        let uncached = DPoPProofVerifier(keyCacheCapacity: 0)
        #expect(uncached.keyCache == nil)
        let first = try verify(try proof(by: key), with: cached)
        #expect(cached.keyCache?.count == 1)
        let again = try proof(by: key)
        let hit = try verify(again, with: cached)
        #expect(cached.keyCache?.count == 1, "the second proof of the key found it")
        #expect(hit == (try verify(again, with: uncached)))
        #expect(hit.thumbprint == first.thumbprint && hit.thumbprint == JWKThumbprint.sha256(of: key.publicKey))
        // The cached key's jwk with another key's signature, and a tampered signature: refused.
        let other = P256.Signing.PrivateKey()
        expectCode(.dpopProofInvalid) {
            _ = try verify(try proof(jwkOf: key.publicKey, signedBy: other), with: cached)
        }
        var tampered = Array(try proof(by: key).utf8)
        tampered[tampered.count - 2] =
            tampered[tampered.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        expectCode(.dpopProofInvalid) {
            _ = try verify(String(decoding: tampered, as: UTF8.self), with: cached)
        }
        // And a proof of the cached key for another credential.
        expectCode(.dpopProofInvalid) { _ = try verify(try proof(by: key), with: cached, token: "st_other") }
    }

    @Test("Two keys with the same x are two entries: neither is taken for the other")
    func sameXOtherKey() throws {
        let key = P256.Signing.PrivateKey()
        let twin = try Self.negated(key)
        let (point, twinPoint) = (Array(key.publicKey.x963Representation), Array(twin.publicKey.x963Representation))
        #expect(point[1..<33] == twinPoint[1..<33] && point[33..<65] != twinPoint[33..<65])
        let verifier = DPoPProofVerifier(keyCacheCapacity: 16)
        let first = try verify(try proof(by: key), with: verifier)
        let second = try verify(try proof(by: twin), with: verifier)
        #expect(first.thumbprint == JWKThumbprint.sha256(of: key.publicKey))
        #expect(second.thumbprint == JWKThumbprint.sha256(of: twin.publicKey))
        #expect(first.thumbprint != second.thumbprint)
        #expect(verifier.keyCache?.count == 2)
        // Each key's jwk with the other's signature: refused, both held.
        expectCode(.dpopProofInvalid) {
            _ = try verify(try proof(jwkOf: key.publicKey, signedBy: twin), with: verifier)
        }
        expectCode(.dpopProofInvalid) {
            _ = try verify(try proof(jwkOf: twin.publicKey, signedBy: key), with: verifier)
        }
        // Coordinates that differ in their last byte only are different entries.
        let x = [UInt8](repeating: 7, count: 32)
        var y = [UInt8](repeating: 9, count: 32)
        let a = DPoPKeyCache.Coordinates(x: x, y: y)
        y[31] = 10
        let b = DPoPKeyCache.Coordinates(x: x, y: y)
        #expect(a != b)
        let cache = DPoPKeyCache(capacity: 4)
        cache.insert(.init(key: key.publicKey, thumbprint: first.thumbprint), for: a)
        #expect(cache.entry(for: b) == nil)
        #expect(cache.entry(for: a)?.thumbprint == first.thumbprint)
    }

    @Test("A point off the curve is refused every time and never held")
    func badPointRefused() throws {
        let key = P256.Signing.PrivateKey()
        let verifier = DPoPProofVerifier(keyCacheCapacity: 16)
        let point = Array(key.publicKey.x963Representation)
        let x = Base64URL.encode(point[1..<33])
        let jwk = #"{"kty":"EC","crv":"P-256","x":"\#(x)","y":"\#(x)"}"#
        let header = #"{"typ":"dpop+jwt","alg":"ES256","jwk":\#(jwk)}"#
        let claims =
            #"{"jti":"abcdefghijklmnopqrstuv","htm":"POST","htu":"\#(Self.url)","iat":1800000000,"ath":"\#(DPoPProof.accessTokenHash(of: "st_tok"))"}"#
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        let offCurve = input + "." + Base64URL.encode(try key.signature(for: Array(input.utf8)).rawRepresentation)
        for _ in 0..<2 {
            expectCode(.dpopProofInvalid) { _ = try verify(offCurve, with: verifier) }
        }
        #expect(verifier.keyCache?.count == 0)
    }

    @Test("The cache never holds more than its capacity, and keeps the keys in use")
    func bounded() throws {
        let verifier = DPoPProofVerifier(keyCacheCapacity: 8)
        let keys = (0..<40).map { _ in P256.Signing.PrivateKey() }
        let inUse = keys[0]
        for key in keys {
            _ = try verify(try proof(by: key), with: verifier)
            _ = try verify(try proof(by: inUse), with: verifier)
            #expect((verifier.keyCache?.count ?? 0) <= 8)
        }
        #expect(verifier.keyCache?.count ?? 0 >= 4)
        // The key in use survived every turnover; the first others did not.
        let coordinates = { (key: P256.Signing.PrivateKey) -> DPoPKeyCache.Coordinates in
            let point = Array(key.publicKey.x963Representation)
            return DPoPKeyCache.Coordinates(x: Array(point[1..<33]), y: Array(point[33..<65]))
        }
        #expect(verifier.keyCache?.entry(for: coordinates(inUse)) != nil)
        #expect(verifier.keyCache?.entry(for: coordinates(keys[1])) == nil)
    }

    @Test("htu is compared as the normalised URLs are, without building them")
    func htuComparison() {
        let same: [(String, String)] = [
            ("https://tessera.test/v1/x", "https://tessera.test/v1/x"),
            ("HTTPS://Tessera.TEST/v1/x", "https://tessera.test/v1/x"),
            ("https://tessera.test:443/v1/x", "https://tessera.test/v1/x"),
            ("http://tessera.test:80/v1/x", "http://tessera.test/v1/x"),
            ("https://tessera.test/v1/x?a=1#f", "https://tessera.test/v1/x"),
            ("https://tessera.test", "https://tessera.test/"),
            ("https://tessera.test?q", "https://tessera.test/"),
            ("http://127.0.0.1:8080/v1/x", "http://127.0.0.1:8080/v1/x"),
        ]
        let different: [(String, String)] = [
            ("http://tessera.test/v1/x", "https://tessera.test/v1/x"),
            ("https://tessera.test/v1/X", "https://tessera.test/v1/x"),
            ("https://tessera.test:8443/v1/x", "https://tessera.test/v1/x"),
            ("https://tessera.test:80/v1/x", "https://tessera.test/v1/x"),
            ("https://user@tessera.test/v1/x", "https://tessera.test/v1/x"),
            ("https://evil.test/v1/x", "https://tessera.test/v1/x"),
            ("https://tessera.test/v1/x/", "https://tessera.test/v1/x"),
            ("https://tessera.test//", "https://tessera.test/"),
            // The Kelvin sign lowercases to an ASCII "k" but is not ASCII: never a host's letter.
            ("https://\u{212A}ey.test/v1/x", "https://key.test/v1/x"),
            ("ftp://tessera.test/v1/x", "ftp://tessera.test/v1/x"),
            ("https:///v1/x", "https:///v1/x"),
            ("https://tessera.test/v1 x", "https://tessera.test/v1 x"),
            ("tessera.test/v1/x", "tessera.test/v1/x"),
        ]
        for (claimed, url) in same {
            #expect(DPoPProofVerifier.sameURL(claimed, url), "\(claimed) names \(url)")
            #expect(DPoPProofVerifier.sameURL(url, claimed))
            #expect(DPoPProofVerifier.normalizedURL(claimed) == DPoPProofVerifier.normalizedURL(url))
        }
        for (claimed, url) in different {
            #expect(!DPoPProofVerifier.sameURL(claimed, url), "\(claimed) does not name \(url)")
        }
        #expect(DPoPProofVerifier.normalizedURL("HTTPS://Tessera.Test:443?x") == "https://tessera.test/")
        #expect(DPoPProofVerifier.normalizedURL("https://user@tessera.test/") == nil)
    }
}
