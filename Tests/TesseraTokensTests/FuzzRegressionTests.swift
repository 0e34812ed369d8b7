import Crypto
import Foundation
import Testing

@testable import TesseraTokens

/// Inputs the libFuzzer targets in `Fuzz/` (`scripts/fuzz`) found to crash, kept as tests.
///
/// Every number a token carries is a finite double, so claims read from a token can hold dates far
/// outside `Int64` seconds. Writing such claims back (Codable, re-signing, re-minting) and the
/// lifetime error message used to convert those doubles to integers with a trapping conversion.
@Suite struct FuzzRegressionTests {
    /// A session JWT with the given payload and a signature that does not matter (read unverified).
    private static func unsignedSessionJWT(_ payload: String) -> String {
        Base64URL.encode(Array(#"{"alg":"ES256","kid":"sk1","typ":"session+jwt"}"#.utf8)) + "."
            + Base64URL.encode(Array(payload.utf8)) + "." + Base64URL.encode([UInt8](repeating: 1, count: 64))
    }

    private static let ring = try! SessionKeyRing(
        signingKey: try! SessionSigningKey(kid: "sk1", privateKeyRawRepresentation: (1...32).map { UInt8($0) }))

    /// Fuzz/SessionJWT (seed with `"iat":1e300,"nbf":-1e300`): the server reads these claims with
    /// `SessionClaims.unverified(from:)` before checking any signature; encoding them trapped.
    @Test func unverifiedClaimsWithHugeDatesEncode() throws {
        let token = Self.unsignedSessionJWT(
            #"{"iss":"https://tessera.example","aud":"prj_fuzz","sub":"usr_1","sid":"ses_1","exp":1e300,"#
                + #""iat":1e300,"nbf":-1e300,"kind":"anonymous","external_id":null}"#)
        let claims = try SessionClaims.unverified(from: token)
        #expect(claims.issuedAt.timeIntervalSince1970 == 1e300)

        let data = try JSONEncoder().encode(claims)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((object["iat"] as? NSNumber)?.int64Value == Int64.max)
        #expect((object["exp"] as? NSNumber)?.int64Value == Int64.max)
        #expect((object["nbf"] as? NSNumber)?.int64Value == Int64.min)
    }

    /// Fuzz/SessionJWT: re-signing such claims trapped in `SessionKeyRing.sign`; now the dates are
    /// clamped to `Int64` seconds and the token verifies.
    @Test func signingClaimsWithHugeDatesClampsThem() throws {
        let claims = SessionClaims(
            issuer: "https://tessera.example", audience: "prj_fuzz", subject: "usr_1", sessionID: "ses_1",
            expiration: Date(timeIntervalSince1970: 1e300), issuedAt: Date(timeIntervalSince1970: -1e300),
            notBefore: Date(timeIntervalSince1970: -.greatestFiniteMagnitude), kind: "anonymous", externalID: nil)
        let verified = try Self.ring.verify(Self.ring.sign(claims), now: Fixture.now)
        #expect(verified.expiration.timeIntervalSince1970 == Double(Int64.max))
        #expect(verified.issuedAt.timeIntervalSince1970 == Double(Int64.min))
        #expect(verified.notBefore.timeIntervalSince1970 == Double(Int64.min))
    }

    /// Fuzz/IdentityToken: an identity token with `"iat":-1e300` verifies (it lies in the past);
    /// minting its claims again trapped in `IdentityTokenMinter.mint`.
    @Test func remintingVerifiedClaimsWithAncientDates() throws {
        let token = Fixture.signed(#""iat":-1e300,"nbf":-1.7976931348623157e308"#)
        let claims = try Fixture.verifier().verify(token, now: Fixture.now)
        #expect(claims.issuedAt?.timeIntervalSince1970 == -1e300)

        let reminted = IdentityTokenMinter(secret: Fixture.secret).mint(claims)
        let again = try Fixture.verifier().verify(reminted, now: Fixture.now)
        #expect(again.subject == claims.subject)
        #expect(again.expiration == claims.expiration)
        #expect(again.issuedAt?.timeIntervalSince1970 == Double(Int64.min))
        #expect(again.notBefore?.timeIntervalSince1970 == Double(Int64.min))
    }

    /// Fuzz/IdentityToken (`"exp":1e308` against a verifier whose maximum lifetime is 1e300 s):
    /// writing the lifetime into the error message trapped converting it to `Int`.
    @Test func lifetimeErrorWithHugeConfiguredMaximum() {
        let verifier = Fixture.verifier(leeway: 0, maximumLifetime: 1e300)
        expectCode(.identityTokenLifetimeTooLong) {
            _ = try verifier.verify(Fixture.signed(exp: 1e308), now: Fixture.now)
        }
    }

    @Test(arguments: [
        (1.9, Int64(1)), (-1.5, -2), (0, 0), (1_800_000_000.999, 1_800_000_000),
        (0x1p63, .max), (1e300, .max), (.infinity, .max), (-0x1p63, .min), (-1e300, .min), (-.infinity, .min),
        (.nan, 0),
    ])
    func numericDateIsTotal(_ seconds: Double, _ expected: Int64) {
        #expect(seconds.numericDate == expected)
    }
}

/// Replays the committed fuzz corpora (`Fuzz/Corpus/`) through the public API without libFuzzer,
/// so `swift test` covers what the fuzzers found interesting: no input traps, and no input verifies
/// unless it carries a valid MAC under the fixture secret.
@Suite struct FuzzCorpusReplayTests {
    private static func corpus(_ target: String) throws -> [[UInt8]] {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // this file, TesseraTokensTests, Tests
        let directory = url.appendingPathComponent("Fuzz/Corpus/\(target)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        return try names.map { Array(try Data(contentsOf: directory.appendingPathComponent($0))) }
    }

    @Test func identityTokenCorpus() throws {
        let inputs = try Self.corpus("IdentityToken")
        #expect(inputs.count >= 100)
        let verifier = Fixture.verifier()
        for input in inputs {
            let token = String(decoding: input.dropFirst(), as: UTF8.self)
            guard (try? verifier.verify(token, now: Fixture.now)) != nil else { continue }
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            #expect(
                parts.count == 3
                    && Fixture.mac("\(parts[0]).\(parts[1])", key: Array(Fixture.secret.value.utf8)) == String(parts[2])
            )
        }
    }

    @Test func sessionJWTCorpus() throws {
        let inputs = try Self.corpus("SessionJWT")
        #expect(inputs.count >= 50)
        // Same kid as the fuzz fixture's key, another scalar: nothing in the corpus may verify.
        let key = try SessionSigningKey(kid: "sk1", privateKeyRawRepresentation: (7...38).map { UInt8($0) })
        let ring = try SessionKeyRing(signingKey: key)
        for input in inputs {
            let token = String(decoding: input.dropFirst(), as: UTF8.self)
            #expect((try? ring.verify(token, now: Fixture.now)) == nil, "verified under a foreign key")
            if let claims = try? SessionClaims.unverified(from: token) {
                _ = try JSONEncoder().encode(claims)
            }
        }
    }

    @Test func jwksCorpus() throws {
        let inputs = try Self.corpus("JWKS")
        #expect(inputs.count >= 50)
        for input in inputs {
            guard let set = try? JSONWebKeySet(json: input) else { continue }
            #expect(try JSONWebKeySet(json: set.jsonData()) == set)
        }
    }
}
