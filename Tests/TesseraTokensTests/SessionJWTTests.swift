import Crypto
import Foundation
import Testing

@testable import TesseraTokens

@Suite struct SessionJWTTests {
    static let key = try! SessionSigningKey(
        kid: "sjk_1", privateKeyRawRepresentation: Array(repeating: 0x11, count: 32))
    static let ring = try! SessionKeyRing(signingKey: key)
    static let claims = SessionClaims(
        issuer: "http://127.0.0.1:8080",
        audience: "prj_test",
        subject: "usr_1",
        sessionID: "ses_1",
        expiration: Date(timeIntervalSince1970: 1_800_000_300),
        issuedAt: Fixture.now,
        notBefore: Fixture.now,
        kind: "verified",
        externalID: "user-1"
    )

    @Test func signsAndVerifies() throws {
        let token = Self.ring.sign(Self.claims)
        #expect(try Self.ring.verify(token, now: Fixture.now) == Self.claims)
        let header = String(decoding: Base64URL.decode(token.split(separator: ".")[0])!, as: UTF8.self)
        #expect(header == #"{"alg":"ES256","kid":"sjk_1","typ":"session+jwt"}"#)
        #expect(try SessionClaims.unverified(from: token) == Self.claims)
        var anonymous = Self.claims
        anonymous.externalID = nil
        anonymous.kind = "anonymous"
        let anonymousToken = Self.ring.sign(anonymous)
        #expect(try Self.ring.verify(anonymousToken, now: Fixture.now) == anonymous)
        #expect(
            String(decoding: Base64URL.decode(anonymousToken.split(separator: ".")[1])!, as: UTF8.self).contains(
                #""external_id":null"#))
    }

    @Test func expiryAndTheAuthenticateExchange() throws {
        let token = Self.ring.sign(Self.claims)
        let exp = Self.claims.expiration.timeIntervalSince1970
        _ = try Self.ring.verify(token, now: Date(timeIntervalSince1970: exp + 59))
        expectCode(.tokenExpired) { _ = try Self.ring.verify(token, now: Date(timeIntervalSince1970: exp + 60)) }
        expectCode(.tokenExpired) { _ = try Self.ring.verify(token, now: Date(timeIntervalSince1970: exp), leeway: 0) }
        // An expired JWT with a good signature is still usable where the caller allows it.
        _ = try Self.ring.verify(token, now: Date(timeIntervalSince1970: exp + 86400), allowExpired: true)
        expectCode(.tokenNotYetValid) { _ = try Self.ring.verify(token, now: Fixture.now.addingTimeInterval(-61)) }
    }

    @Test func hs256MACedWithThePublicKeyIsRefused() {
        let jwk = Self.key.publicJWK
        let input =
            Base64URL.encode(Array(#"{"alg":"HS256","kid":"sjk_1","typ":"session+jwt"}"#.utf8)) + "."
            + Base64URL.encode(Self.claims.payloadBytes())
        let publicKeyForms: [[UInt8]] = [
            Array(Self.key.privateKey.publicKey.x963Representation),
            Array(Self.key.privateKey.publicKey.derRepresentation),
            Array(Self.key.privateKey.publicKey.pemRepresentation.utf8), (try? Array(JSONEncoder().encode(jwk))) ?? [],
        ]
        for keyBytes in publicKeyForms {
            let token = input + "." + Fixture.mac(input, key: keyBytes)
            expectCode(.unsupportedAlgorithm) { _ = try Self.ring.verify(token, now: Fixture.now, allowExpired: true) }
        }
        for alg in ["none", "ES384", "es256", "RS256", "EdDSA"] {
            let header = Base64URL.encode(Array(#"{"alg":"\#(alg)","kid":"sjk_1","typ":"session+jwt"}"#.utf8))
            let token =
                header + "." + Base64URL.encode(Self.claims.payloadBytes()) + "."
                + Base64URL.encode(Array(repeating: 1, count: 64))
            expectCode(.unsupportedAlgorithm) { _ = try Self.ring.verify(token, now: Fixture.now) }
        }
    }

    @Test func allZeroAndMalformedSignaturesAreRefused() {
        let parts = Self.ring.sign(Self.claims).split(separator: ".").map(String.init)
        let signature = Base64URL.decode(parts[2])!
        for bad in [
            Array(repeating: 0, count: 64), Array(signature.prefix(63)), signature + [0], Array(signature.reversed()),
        ] as [[UInt8]] {
            let token = parts[0] + "." + parts[1] + "." + Base64URL.encode(bad)
            expectCode(.invalidSignature) { _ = try Self.ring.verify(token, now: Fixture.now) }
        }
    }

    @Test func kidAndTypAreRequired() {
        let payload = Base64URL.encode(Self.claims.payloadBytes())
        func token(_ header: String) -> String {
            let input = Base64URL.encode(Array(header.utf8)) + "." + payload
            let signature = try! Self.key.privateKey.signature(for: Array(input.utf8))
            return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
        }
        _ = try? Self.ring.verify(token(#"{"alg":"ES256","kid":"sjk_1","typ":"session+jwt"}"#), now: Fixture.now)
        expectCode(.invalidToken) {
            _ = try Self.ring.verify(token(#"{"alg":"ES256","typ":"session+jwt"}"#), now: Fixture.now)
        }
        expectCode(.invalidSignature) {
            _ = try Self.ring.verify(token(#"{"alg":"ES256","kid":"other","typ":"session+jwt"}"#), now: Fixture.now)
        }
        expectCode(.invalidToken) {
            _ = try Self.ring.verify(token(#"{"alg":"ES256","kid":"sjk_1","typ":"JWT"}"#), now: Fixture.now)
        }
        expectCode(.invalidToken) {
            _ = try Self.ring.verify(token(#"{"alg":"ES256","kid":"sjk_1"}"#), now: Fixture.now)
        }
        expectCode(.invalidToken) {
            _ = try Self.ring.verify(
                token(#"{"alg":"ES256","kid":"sjk_1","typ":"session+jwt","jwk":{}}"#), now: Fixture.now)
        }
    }

    @Test func rotationKeepsRetiredKeysVerifying() throws {
        let old = SessionSigningKey.generate()
        let new = SessionSigningKey.generate()
        let oldToken = try SessionKeyRing(signingKey: old).sign(Self.claims)
        let rotated = try SessionKeyRing(signingKey: new, retiredKeys: [old.publicJWK])
        _ = try rotated.verify(oldToken, now: Fixture.now)
        #expect(rotated.jwks.keys.map(\.kid) == [new.kid, old.kid])
        expectCode(.invalidSignature) { _ = try SessionKeyRing(signingKey: new).verify(oldToken, now: Fixture.now) }
        #expect(throws: KeyConfigurationError.self) {
            try SessionKeyRing(signingKey: old, retiredKeys: [old.publicJWK])
        }
    }

    @Test func keysRoundTripThroughStorage() throws {
        let key = SessionSigningKey.generate()
        let restored = try SessionSigningKey(kid: key.kid, privateKeyRawRepresentation: key.privateKeyRawRepresentation)
        let token = try SessionKeyRing(signingKey: key).sign(Self.claims)
        _ = try SessionKeyRing(signingKey: restored).verify(token, now: Fixture.now)
        #expect(throws: KeyConfigurationError.self) {
            try SessionSigningKey(kid: "k", privateKeyRawRepresentation: [1, 2, 3])
        }
    }

    @Test func jwksRoundTripAndOfflineVerification() throws {
        let json = Self.ring.jwks.jsonData()
        let set = try JSONWebKeySet(json: json)
        #expect(set == Self.ring.jwks)
        let verifier = try SessionJWTVerifier(jwks: set, issuer: "http://127.0.0.1:8080", audience: "prj_test")
        #expect(try verifier.verify(Self.ring.sign(Self.claims), now: Fixture.now) == Self.claims)
        expectCode(.audienceMismatch) {
            _ = try SessionJWTVerifier(jwks: set, audience: "prj_other").verify(
                Self.ring.sign(Self.claims), now: Fixture.now)
        }
        expectCode(.invalidClaims) {
            _ = try SessionJWTVerifier(jwks: set, issuer: "https://x").verify(
                Self.ring.sign(Self.claims), now: Fixture.now)
        }
        // Foundation decodes the same document.
        let decoded = try JSONDecoder().decode(JSONWebKeySet.self, from: Data(json))
        #expect(decoded == set)
    }

    @Test func jwksIsReadStrictly() {
        let jwk = Self.key.publicJWK
        let good = #"{"kty":"EC","crv":"P-256","x":"\#(jwk.x)","y":"\#(jwk.y)","kid":"a"}"#
        let bad = [
            #"{"keys":[\#(good),\#(good)]}"#,  // duplicate kid
            #"{"keys":[{"kty":"EC","crv":"P-384","x":"\#(jwk.x)","y":"\#(jwk.y)","kid":"a"}]}"#,
            #"{"keys":[{"kty":"RSA","crv":"P-256","x":"\#(jwk.x)","y":"\#(jwk.y)","kid":"a"}]}"#,
            #"{"keys":[{"kty":"EC","crv":"P-256","x":"\#(jwk.x)","y":"\#(jwk.x)","kid":"a"}]}"#,  // off the curve
            #"{"keys":[{"kty":"EC","crv":"P-256","x":"\#(jwk.x)=","y":"\#(jwk.y)","kid":"a"}]}"#,
            #"{"keys":[{"kty":"EC","crv":"P-256","x":"\#(jwk.x)","y":"\#(jwk.y)","kid":"a","d":"AAAA"}]}"#,
            #"{"keys":[{"kty":"EC","crv":"P-256","x":"\#(jwk.x)","y":"\#(jwk.y)","kid":"a","use":"enc"}]}"#,
            #"{"keys":[{"kty":"EC","crv":"P-256","x":"\#(jwk.x)","y":"\#(jwk.y)","kid":"a","alg":"ES512"}]}"#,
            #"{"keys":[{"kty":"EC","crv":"P-256","x":"\#(jwk.x)","y":"\#(jwk.y)"}]}"#,
            #"{"keys":{}}"#, #"[]"#, #"{"keys":[1]}"#, #"{"keys":[],"keys":[]}"#,
        ]
        for text in bad {
            #expect(throws: KeyConfigurationError.self, "\(text)") { try JSONWebKeySet(json: Array(text.utf8)) }
        }
    }

    @Test func unverifiedClaimsRefuseGarbage() {
        expectCode(.invalidToken) { _ = try SessionClaims.unverified(from: "a.b.c") }
        expectCode(.unsupportedAlgorithm) { _ = try SessionClaims.unverified(from: Fixture.signed()) }
    }
}
