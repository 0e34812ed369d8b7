import Foundation
import Testing

@testable import TesseraTokens

/// Every claim rule, at both sides of each boundary, with a fixed clock (now = 1_800_000_000, leeway 60 s).
@Suite struct IdentityClaimsTests {
    let t = Fixture.now.timeIntervalSince1970

    private func verify(_ extra: String = "", exp: Double? = nil, verifier: IdentityTokenVerifier = Fixture.verifier())
        throws -> IdentityClaims
    {
        try verifier.verify(Fixture.signed(extra, exp: exp ?? t + 300), now: Fixture.now)
    }

    private func verify(payload: String, verifier: IdentityTokenVerifier = Fixture.verifier()) throws -> IdentityClaims
    {
        try verifier.verify(Fixture.token(header: Fixture.header, payload: payload), now: Fixture.now)
    }

    @Test func expiryWithLeeway() throws {
        _ = try verify(exp: t - 59)
        _ = try verify(exp: t - 59.5)
        expectCode(.identityTokenExpired) { _ = try verify(exp: t - 60) }
        expectCode(.identityTokenExpired) { _ = try verify(exp: t - 61) }
        let strict = Fixture.verifier(leeway: 0)
        _ = try verify(exp: t + 1, verifier: strict)
        expectCode(.identityTokenExpired) { _ = try verify(exp: t, verifier: strict) }
    }

    @Test func fractionalNumericDates() throws {
        let claims = try verify(#""iat":\#(t - 0.25),"nbf":\#(t + 59.75)"#, exp: t + 100.5)
        #expect(claims.expiration.timeIntervalSince1970 == t + 100.5)
        #expect(claims.issuedAt?.timeIntervalSince1970 == t - 0.25)
    }

    @Test func lifetimeCeiling() throws {
        _ = try verify(exp: t + 3600)
        _ = try verify(exp: t + 3660)
        expectCode(.identityTokenLifetimeTooLong) { _ = try verify(exp: t + 3660.5) }
        expectCode(.identityTokenLifetimeTooLong) { _ = try verify(exp: t + 86400) }
        let short = Fixture.verifier(maximumLifetime: 300)
        _ = try verify(exp: t + 360, verifier: short)
        expectCode(.identityTokenLifetimeTooLong) { _ = try verify(exp: t + 361, verifier: short) }
    }

    @Test func notBeforeAndIssuedAt() throws {
        _ = try verify(#""nbf":\#(t + 60)"#)
        expectCode(.identityTokenNotYetValid) { _ = try verify(#""nbf":\#(t + 61)"#) }
        _ = try verify(#""iat":\#(t + 60)"#)
        expectCode(.identityTokenNotYetValid) { _ = try verify(#""iat":\#(t + 61)"#) }
        _ = try verify(#""iat":\#(t - 3000),"nbf":\#(t - 3000)"#)
    }

    @Test func requiredAndTypedClaims() {
        expectCode(.invalidClaims) { _ = try verify(payload: #"{"exp":\#(t + 300)}"#) }
        expectCode(.invalidClaims) { _ = try verify(payload: #"{"sub":"a"}"#) }
        for bad in [
            #"{"sub":42,"exp":\#(t + 300)}"#, #"{"sub":null,"exp":\#(t + 300)}"#, #"{"sub":["a"],"exp":\#(t + 300)}"#,
            #"{"sub":"a","exp":"\#(t + 300)"}"#, #"{"sub":"a","exp":null}"#, #"{"sub":"a","exp":true}"#,
            #"{"sub":"a","exp":\#(t + 300),"nbf":"0"}"#, #"{"sub":"a","exp":\#(t + 300),"iat":{}}"#,
            #"{"sub":"a","exp":\#(t + 300),"aud":7}"#, #"{"sub":"a","exp":\#(t + 300),"aud":["prj_test",7]}"#,
            #"{"sub":"a","exp":\#(t + 300),"aud":[]}"#, #"{"sub":"a","exp":\#(t + 300),"jti":5}"#,
            #"{"sub":"a","exp":\#(t + 300),"jti":""}"#, #"{"sub":"a","exp":\#(t + 300),"iss":1}"#,
        ] {
            expectCode(.invalidClaims) { _ = try verify(payload: bad) }
        }
    }

    @Test func subjectRules() throws {
        let max = String(repeating: "é", count: 255)
        #expect(try verify(payload: #"{"sub":"\#(max)","exp":\#(t + 300)}"#).subject == max)
        expectCode(.invalidClaims) { _ = try verify(payload: #"{"sub":"\#(max)x","exp":\#(t + 300)}"#) }
        expectCode(.invalidClaims) { _ = try verify(payload: #"{"sub":"","exp":\#(t + 300)}"#) }
        for control in ["\\u0000", "\\n", "\\u001f", "\\u007f", "\\u0085"] {
            expectCode(.invalidClaims) { _ = try verify(payload: #"{"sub":"a\#(control)b","exp":\#(t + 300)}"#) }
        }
    }

    @Test func audienceIsMatchedExactly() throws {
        _ = try verify(#""aud":"prj_test""#)
        _ = try verify(#""aud":"acme""#)
        _ = try verify(#""aud":["other","acme"]"#)
        for aud in [
            #""prj_tes""#, #""prj_test ""#, #""PRJ_TEST""#, #""Acme""#, #""acme/""#, #""prj_testx""#, #"["other"]"#,
        ] {
            expectCode(.audienceMismatch) { _ = try verify(#""aud":\#(aud)"#) }
        }
        // No Unicode normalisation: the slug is NFC, the token's aud NFD.
        let verifier = try IdentityTokenVerifier(
            secrets: [Fixture.secret],
            configuration: .init(projectID: "prj_x", projectSlug: "caf\u{E9}")
        )
        _ = try verify(#""aud":"caf\u00e9""#, verifier: verifier)
        expectCode(.audienceMismatch) { _ = try verify(#""aud":"cafe\u0301""#, verifier: verifier) }
        // Required audience.
        _ = try verify()
        expectCode(.audienceMismatch) { _ = try verify(verifier: Fixture.verifier(requireAudience: true)) }
        _ = try verify(#""aud":"prj_test""#, verifier: Fixture.verifier(requireAudience: true))
    }

    @Test func issuerIsIgnoredUnlessExpected() throws {
        _ = try verify(#""iss":"anything""#)
        let verifier = Fixture.verifier(expectedIssuer: "https://api.example.com")
        _ = try verify(#""iss":"https://api.example.com""#, verifier: verifier)
        expectCode(.invalidClaims) { _ = try verify(#""iss":"https://api.example.com/""#, verifier: verifier) }
        expectCode(.invalidClaims) { _ = try verify(verifier: verifier) }
    }

    @Test func nameAliasesAndRules() throws {
        #expect(try verify(#""name":"Ada""#).name == "Ada")
        #expect(try verify(#""display_name":"Ada""#).name == "Ada")
        #expect(try verify(#""displayName":"Ada""#).name == "Ada")
        #expect(try verify(#""displayName":"C","display_name":"B","name":"A""#).name == "A")
        #expect(try verify(#""displayName":"C","display_name":"B""#).name == "B")
        #expect(try verify(#""name":null,"displayName":"C""#).name == "C")
        let max = String(repeating: "n", count: 200)
        #expect(try verify(#""name":"\#(max)""#).name == max)
        expectCode(.invalidName) { _ = try verify(#""name":"\#(max)n""#) }
        expectCode(.invalidName) { _ = try verify(#""name":"""#) }
        expectCode(.invalidName) { _ = try verify(#""name":"a\nb""#) }
        expectCode(.invalidName) { _ = try verify(#""name":5"#) }
        expectCode(.invalidName) { _ = try verify(#""display_name":["x"]"#) }
    }

    @Test func avatarAliasesAndRules() throws {
        #expect(
            try verify(#""avatar_url":"https://cdn.example.com/a.png""#).avatarURL == "https://cdn.example.com/a.png")
        #expect(
            try verify(#""avatarUrl":"https://cdn.example.com/b.png""#).avatarURL == "https://cdn.example.com/b.png")
        #expect(try verify(#""picture":"https://x.io:8443/p?s=1#f""#).avatarURL == "https://x.io:8443/p?s=1#f")
        #expect(try verify(#""picture":"https://p","avatar_url":"https://a""#).avatarURL == "https://a")
        let prefix = "https://example.com/"
        let max = prefix + String(repeating: "a", count: 2048 - prefix.count)
        #expect(try verify(#""avatar_url":"\#(max)""#).avatarURL == max)
        expectCode(.invalidAvatarURL) { _ = try verify(#""avatar_url":"\#(max)a""#) }
        for bad in [
            "http://example.com/a.png", "ftp://example.com", "https://", "https:///path", "javascript:alert(1)",
            "https://user:pass@example.com/", "https://exa mple.com/", "//example.com/a", "example.com/a.png",
            "https://example.com:99999/",
        ] {
            expectCode(.invalidAvatarURL) { _ = try verify(#""avatar_url":"\#(bad)""#) }
        }
        expectCode(.invalidAvatarURL) { _ = try verify(#""picture":1"#) }
    }

    @Test func emailRules() throws {
        #expect(try verify(#""email":"ada@example.com""#).email == "ada@example.com")
        _ = try verify(#""email":"a.b+tag@mail.example.co.uk""#)
        let local = String(repeating: "a", count: 64)
        let domain =
            String(repeating: "b", count: 63) + "." + String(repeating: "c", count: 63) + "."
            + String(repeating: "d", count: 58) + ".io"
        let longest = local + "@" + domain
        #expect(longest.utf8.count == 254)
        _ = try verify(#""email":"\#(longest)""#)
        expectCode(.invalidEmail) { _ = try verify(#""email":"a\#(longest)""#) }
        for bad in [
            "plain", "@example.com", "a@", "a@b", "a..b@example.com", ".a@example.com", "a.@example.com",
            "a@-example.com", "a@example-.com", "a@example..com", "a b@example.com", "a@exa mple.com",
            "a@example.123", "\(local)a@example.com", "a@b@example.com",
        ] {
            expectCode(.invalidEmail) { _ = try verify(#""email":"\#(bad)""#) }
        }
        expectCode(.invalidEmail) { _ = try verify(#""email":true"#) }
    }

    @Test func allClaimsAreReturned() throws {
        let claims = try verify(
            #""aud":["prj_test"],"iat":\#(t - 10),"nbf":\#(t - 10),"jti":"j-1","iss":"backend","name":"Ada","picture":"https://a.io/x","email":"ada@a.io","unknown":{"x":[1]}"#
        )
        #expect(
            claims
                == IdentityClaims(
                    subject: "user-1",
                    expiration: Date(timeIntervalSince1970: t + 300),
                    audience: ["prj_test"],
                    issuedAt: Date(timeIntervalSince1970: t - 10),
                    notBefore: Date(timeIntervalSince1970: t - 10),
                    tokenID: "j-1",
                    issuer: "backend",
                    name: "Ada",
                    avatarURL: "https://a.io/x",
                    email: "ada@a.io"
                )
        )
    }

    @Test func minterRoundTrips() throws {
        let claims = IdentityClaims(
            subject: "user \"42\"\n",  // escaped, then refused by the verifier for its control character
            expiration: Date(timeIntervalSince1970: t + 120.9),
            audience: ["prj_test", "acme"],
            issuedAt: Fixture.now,
            tokenID: "jti-1",
            name: "Ada Lovelace",
            avatarURL: "https://example.com/ada.png",
            email: "ada@example.com"
        )
        let minted = IdentityTokenMinter(secret: Fixture.secret).mint(claims)
        expectCode(.invalidClaims) { _ = try Fixture.verifier().verify(minted, now: Fixture.now) }
        var good = claims
        good.subject = "user-42"
        let verified = try Fixture.verifier().verify(
            IdentityTokenMinter(secret: Fixture.secret).mint(good), now: Fixture.now)
        #expect(verified.subject == "user-42")
        #expect(verified.expiration.timeIntervalSince1970 == t + 120)  // integer exp, rounded down
        #expect(verified.audience == ["prj_test", "acme"])
        #expect(verified.name == "Ada Lovelace")
        // Header names the kid, and exp is an integer on the wire.
        let parts = IdentityTokenMinter(secret: Fixture.secret).mint(good).split(separator: ".")
        #expect(
            String(decoding: Base64URL.decode(parts[0])!, as: UTF8.self) == #"{"alg":"HS256","typ":"JWT","kid":"k1"}"#)
        #expect(String(decoding: Base64URL.decode(parts[1])!, as: UTF8.self).contains(#""exp":1800000120,"#))
    }
}
