import Crypto
import Foundation
import Testing

@testable import TesseraTokens

/// `SessionJWTVerifier(allowedKinds:)`: an app backend can refuse sessions whose `external_id` was only
/// asserted by a client.
@Suite struct SessionKindTests {
    static let ring = SessionJWTTests.ring

    static func token(kind: String, externalID: String? = "bob") -> String {
        var claims = SessionJWTTests.claims
        claims.kind = kind
        claims.externalID = externalID
        return ring.sign(claims)
    }

    @Test func verifiedOnlyRefusesUnverifiedAndAnonymousSessions() throws {
        let verifier = try SessionJWTVerifier(jwks: Self.ring.jwks, audience: "prj_test", allowedKinds: [.verified])
        let claims = try verifier.verify(Self.token(kind: "verified"), now: Fixture.now)
        #expect(claims.externalID == "bob")
        expectCode(.sessionKindNotAllowed) {
            _ = try verifier.verify(Self.token(kind: "unverified"), now: Fixture.now)
        }
        expectCode(.sessionKindNotAllowed) {
            _ = try verifier.verify(Self.token(kind: "anonymous", externalID: nil), now: Fixture.now)
        }
        // A kind this verifier does not know is not allowed either.
        expectCode(.sessionKindNotAllowed) {
            _ = try verifier.verify(Self.token(kind: "verified\u{0301}"), now: Fixture.now)
        }
    }

    @Test func severalKindsAndTheDefault() throws {
        let both = try SessionJWTVerifier(jwks: Self.ring.jwks, allowedKinds: [.verified, .anonymous])
        _ = try both.verify(Self.token(kind: "anonymous", externalID: nil), now: Fixture.now)
        expectCode(.sessionKindNotAllowed) {
            _ = try both.verify(Self.token(kind: "unverified"), now: Fixture.now)
        }
        let any = try SessionJWTVerifier(jwks: Self.ring.jwks)
        #expect(try any.verify(Self.token(kind: "unverified"), now: Fixture.now).kind == "unverified")
        #expect(SessionKind.unverified.rawValue == "unverified")
    }

    @Test func theKindClaimIsRequired() throws {
        // A token without `kind` (signed by the right key) is malformed, not a session of some default kind.
        let payload =
            #"{"iss":"i","aud":"prj_test","sub":"usr_1","sid":"ses_1","exp":1800000300,"iat":1800000000,"nbf":1800000000,"external_id":"bob"}"#
        let input =
            Base64URL.encode(Array(#"{"alg":"ES256","kid":"sjk_1","typ":"session+jwt"}"#.utf8)) + "."
            + Base64URL.encode(Array(payload.utf8))
        let signature = try SessionJWTTests.key.privateKey.signature(for: Array(input.utf8))
        let token = input + "." + Base64URL.encode(Array(signature.rawRepresentation))
        expectCode(.invalidToken) {
            _ = try SessionJWTVerifier(jwks: Self.ring.jwks).verify(token, now: Fixture.now)
        }
    }
}
