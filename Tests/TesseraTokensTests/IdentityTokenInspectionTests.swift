import Foundation
import Testing

@testable import TesseraTokens

/// `inspect` reports every check of the verifier, and its error and claims are always `verify`'s.
@Suite struct IdentityTokenInspectionTests {
    let t = Fixture.now.timeIntervalSince1970
    typealias Verdict = IdentityTokenInspection.Verdict

    /// The checks' names, in order.
    static let names = [
        "structure", "algorithm", "typ", "key id", "signature", "payload JSON",
        "exp type", "nbf type", "iat type", "aud type", "jti", "iss type",
        "exp", "nbf", "iat", "lifetime",
        "sub type", "aud", "iss", "sub", "name", "avatar", "email",
    ]

    /// Inspects `token` and expects its error and claims to be exactly `verify`'s.
    @discardableResult
    static func expectEquivalent(
        _ token: String,
        verifier: IdentityTokenVerifier = Fixture.verifier(),
        now: Date = Fixture.now,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> IdentityTokenInspection {
        let inspection = verifier.inspect(token, now: now)
        let verified = Result { () throws(TokenError) in try verifier.verifyReportingKey(token, now: now) }
        switch verified {
        case .success(let result):
            #expect(inspection.error == nil, "\(String(describing: inspection.error))", sourceLocation: sourceLocation)
            #expect(inspection.claims == result.claims, sourceLocation: sourceLocation)
            #expect(inspection.keyID == result.keyID, sourceLocation: sourceLocation)
            #expect(inspection.checks.allSatisfy { $0.verdict == .passed }, sourceLocation: sourceLocation)
        case .failure(let error):
            #expect(inspection.error == error, sourceLocation: sourceLocation)
            #expect(inspection.claims == nil, sourceLocation: sourceLocation)
            #expect(inspection.checks.contains { $0.verdict == .failed }, sourceLocation: sourceLocation)
        }
        #expect(inspection.checks.map(\.name) == names, sourceLocation: sourceLocation)
        #expect(inspection.checks.allSatisfy { !$0.detail.isEmpty }, sourceLocation: sourceLocation)
        return inspection
    }

    static func verdict(_ inspection: IdentityTokenInspection, _ name: String) -> Verdict? {
        inspection.checks.first { $0.name == name }?.verdict
    }

    static func detail(_ inspection: IdentityTokenInspection, _ name: String) -> String {
        inspection.checks.first { $0.name == name }?.detail ?? ""
    }

    /// The verdicts of every check, as a compact map of the ones that are not `passed`.
    static func notPassed(_ inspection: IdentityTokenInspection) -> [String: Verdict] {
        Dictionary(
            uniqueKeysWithValues: inspection.checks.filter { $0.verdict != .passed }.map { ($0.name, $0.verdict) })
    }

    @Test func validTokensPassEveryCheck() throws {
        let minter = IdentityTokenMinter(secret: Fixture.secret)
        let unkeyed = IdentityTokenMinter(secret: Fixture.otherSecret, includeKeyID: false)
        let verifier = Fixture.verifier(secrets: [Fixture.secret, Fixture.otherSecret], expectedIssuer: "https://app")
        let claims = IdentityClaims(
            subject: "user-42", expiration: Date(timeIntervalSince1970: t + 300), audience: ["prj_test", "x"],
            issuedAt: Date(timeIntervalSince1970: t - 10), notBefore: Date(timeIntervalSince1970: t - 10),
            tokenID: "j-1", issuer: "https://app", name: "Ada", avatarURL: "https://img.example/a.png",
            email: "ada@example.com"
        )
        for token in [minter.mint(claims), unkeyed.mint(claims)] {
            let inspection = Self.expectEquivalent(token, verifier: verifier)
            #expect(inspection.claims == claims)
            #expect(inspection.header?.contains("HS256") == true)
            #expect(inspection.payload?.contains("user-42") == true)
        }
        #expect(verifier.inspect(unkeyed.mint(claims), now: Fixture.now).keyID == "k2")
        let inspection = verifier.inspect(minter.mint(claims), now: Fixture.now)
        #expect(inspection.keyID == "k1")
        #expect(Self.detail(inspection, "exp") == "exp is 2027-01-15T08:05:00Z, in 5 minutes; leeway 60 s.")
        #expect(Self.detail(inspection, "lifetime") == "exp lies 300 s ahead; at most 3600 s, leeway 60 s.")
        for extra in [
            "", #""aud":"acme""#, #""nbf":\#(t + 60),"iat":\#(t - 0.25)"#,
            #""display_name":"Ada","picture":"https://a.b/c""#,
        ] {
            Self.expectEquivalent(Fixture.signed(extra))
        }
    }

    @Test func eachFailureKindIsVerifysError() throws {
        let other = Array(Fixture.otherSecret.value.utf8)
        let cases: [(String, IdentityTokenVerifier, TokenError.Code, [String: Verdict])] = [
            (
                Fixture.token(header: #"{"alg":"HS512","typ":"JWT"}"#, payload: Fixture.payload()), Fixture.verifier(),
                .unsupportedAlgorithm, ["algorithm": .failed, "signature": .notChecked]
            ),
            (
                Fixture.token(header: #"{"alg":"HS256","typ":"JOSE"}"#, payload: Fixture.payload()),
                Fixture.verifier(), .invalidIdentityToken, ["typ": .failed]
            ),
            (
                Fixture.token(header: #"{"alg":"HS256","kid":"nope"}"#, payload: Fixture.payload()),
                Fixture.verifier(), .invalidSignature, ["key id": .failed, "signature": .notChecked]
            ),
            (
                Fixture.token(header: Fixture.header, payload: Fixture.payload(), key: other), Fixture.verifier(),
                .invalidSignature, ["signature": .failed]
            ),
            (Fixture.signed(exp: t - 61), Fixture.verifier(), .identityTokenExpired, ["exp": .failed]),
            (Fixture.signed(#""nbf":\#(t + 61)"#), Fixture.verifier(), .identityTokenNotYetValid, ["nbf": .failed]),
            (Fixture.signed(#""iat":\#(t + 61)"#), Fixture.verifier(), .identityTokenNotYetValid, ["iat": .failed]),
            (Fixture.signed(exp: t + 86400), Fixture.verifier(), .identityTokenLifetimeTooLong, ["lifetime": .failed]),
            (Fixture.signed(#""aud":"other""#), Fixture.verifier(), .audienceMismatch, ["aud": .failed]),
            (Fixture.signed(), Fixture.verifier(requireAudience: true), .audienceMismatch, ["aud": .failed]),
            (
                Fixture.signed(#""iss":"evil""#), Fixture.verifier(expectedIssuer: "good"), .invalidClaims,
                ["iss": .failed]
            ),
            (
                Fixture.token(header: Fixture.header, payload: #"{"exp":\#(t + 300)}"#), Fixture.verifier(),
                .invalidClaims, ["sub type": .failed, "sub": .notChecked]
            ),
            (
                Fixture.signed(#""jti":5,"iss":1"#), Fixture.verifier(expectedIssuer: "x"), .invalidClaims,
                ["jti": .failed, "iss type": .failed, "iss": .notChecked]
            ),
            (
                Fixture.signed(#""name":"","email":"nope","avatar_url":"http://x""#), Fixture.verifier(), .invalidName,
                ["name": .failed, "avatar": .failed, "email": .failed]
            ),
            (
                Fixture.token(header: Fixture.header, payload: #"{"sub":"a","exp":"soon"}"#), Fixture.verifier(),
                .invalidClaims, ["exp type": .failed, "exp": .notChecked, "lifetime": .notChecked]
            ),
            (
                Fixture.token(header: Fixture.header, payload: #"{"sub":"a","sub":"b"}"#), Fixture.verifier(),
                .invalidIdentityToken,
                Dictionary(uniqueKeysWithValues: Self.names.dropFirst(6).map { ($0, .notChecked) })
                    .merging(["payload JSON": .failed]) { $1 }
            ),
        ]
        for (index, (token, verifier, code, expected)) in cases.enumerated() {
            let inspection = Self.expectEquivalent(token, verifier: verifier)
            #expect(inspection.error?.code == code, "case \(index)")
            #expect(Self.notPassed(inspection) == expected, "case \(index)")
        }
    }

    @Test func aBadSignatureStillReportsTheClaims() {
        let token = Fixture.token(
            header: Fixture.header, payload: Fixture.payload(#""aud":"other""#, exp: t - 3600),
            key: Array(Fixture.otherSecret.value.utf8))
        let inspection = Self.expectEquivalent(token)
        #expect(inspection.error == TokenError(.invalidSignature, "The signature does not verify."))
        #expect(Self.notPassed(inspection) == ["signature": .failed, "exp": .failed, "aud": .failed])
        #expect(inspection.keyID == nil)
        #expect(inspection.claims == nil)
        #expect(Self.detail(inspection, "exp") == "exp is 2027-01-15T07:00:00Z, 60 minutes ago; leeway 60 s.")
    }

    @Test func aBrokenStructureChecksNothingElse() {
        for token in ["", "a.b", "a.b.c.d", Fixture.signed() + "=", #"{"alg":"HS256"}.x.y"#] {
            let inspection = Self.expectEquivalent(token)
            #expect(Self.verdict(inspection, "structure") == .failed)
            #expect(inspection.checks.dropFirst().allSatisfy { $0.verdict == .notChecked })
        }
        // A forbidden header member: the header still decodes for the operator to read.
        let token = Fixture.token(header: #"{"alg":"HS256","jku":"https://evil"}"#, payload: Fixture.payload())
        let inspection = Self.expectEquivalent(token)
        #expect(inspection.header == #"{"alg":"HS256","jku":"https://evil"}"#)
        #expect(inspection.payload == Fixture.payload())
    }

    @Test func aShortSignatureFailsBeforeAnUnknownKid() {
        // verify looks at the length first; the inspection also reports the unknown kid.
        let valid = Fixture.token(header: #"{"alg":"HS256","kid":"nope"}"#, payload: Fixture.payload())
        let token = String(valid.dropLast(3))
        let inspection = Self.expectEquivalent(token)
        #expect(inspection.error == TokenError(.invalidSignature, "An HS256 signature is 32 bytes."))
        #expect(Self.notPassed(inspection) == ["key id": .failed, "signature": .failed])
    }

    /// Seeded mutations of valid tokens: flipped characters, dropped, swapped and duplicated segments.
    @Test(arguments: [11, 12, 13] as [UInt64])
    func mutatedTokensAreInspectedAsTheyAreVerified(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let verifier = Fixture.verifier(secrets: [Fixture.secret, Fixture.otherSecret], expectedIssuer: "iss-1")
        let minter = IdentityTokenMinter(secret: Fixture.secret)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=".utf8)
        var failures: Set<String> = []
        for iteration in 0..<150 {
            let claims = IdentityClaims(
                subject: "user-\(iteration)",
                expiration: Date(timeIntervalSince1970: t + Double(Int.random(in: -200...4000, using: &random))),
                audience: Bool.random(using: &random) ? ["prj_test"] : ["other"],
                issuedAt: Date(timeIntervalSince1970: t + Double(Int.random(in: -100...100, using: &random))),
                tokenID: "j\(iteration)", issuer: Bool.random(using: &random) ? "iss-1" : "iss-2",
                name: Bool.random(using: &random) ? "Ada" : nil, email: "ada@example.com"
            )
            var segments = minter.mint(claims).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            switch iteration % 5 {
            case 0:  // unchanged: the random claims alone
                break
            case 1, 2:  // flip characters
                var bytes = Array(segments.joined(separator: ".").utf8)
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = alphabet.randomElement(using: &random)!
                }
                segments = [String(decoding: bytes, as: UTF8.self)]
            case 3:  // swap or drop a segment
                let a = Int.random(in: 0..<3, using: &random)
                let b = Int.random(in: 0..<3, using: &random)
                if a == b { segments.remove(at: a) } else { segments.swapAt(a, b) }
            default:  // another token's segment
                let other = IdentityTokenMinter(secret: Fixture.otherSecret, includeKeyID: Bool.random(using: &random))
                    .mint(IdentityClaims(subject: "x", expiration: Date(timeIntervalSince1970: t + 60)))
                let index = Int.random(in: 0..<3, using: &random)
                segments[index] = String(other.split(separator: ".")[index])
            }
            let token = segments.joined(separator: ".")
            let inspection = Self.expectEquivalent(token, verifier: verifier)
            if let error = inspection.error { failures.insert(error.code.rawValue) }
        }
        // The mutations reach more than one layer of the verifier.
        #expect(failures.count >= 4, "\(failures)")
    }

    @Test func noInspectionContainsTheSecretOrTheSignature() {
        let verifier = Fixture.verifier(secrets: [Fixture.secret, Fixture.otherSecret])
        let tokens = [
            Fixture.signed(), Fixture.signed(exp: t - 600),
            Fixture.token(
                header: Fixture.header, payload: Fixture.payload(), key: Array("wrong-key-0123456789-abcdefghijk".utf8)),
            Fixture.token(header: #"{"alg":"HS256","kid":"k2"}"#, payload: Fixture.payload()),
        ]
        for token in tokens {
            let inspection = verifier.inspect(token, now: Fixture.now)
            let text =
                [inspection.header ?? "", inspection.payload ?? "", inspection.keyID ?? "", "\(inspection)"]
                + inspection.checks.flatMap { [$0.name, $0.detail] }
            let signature = String(token.split(separator: ".")[2])
            for secret in [Fixture.secret.value, Fixture.otherSecret.value, signature, String(signature.prefix(12))] {
                #expect(!text.contains { $0.contains(secret) })
            }
        }
    }
}
