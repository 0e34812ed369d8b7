import Foundation
import Testing

@testable import TesseraTokens

/// ``IdentityTokenVerifier/verifyReportingKey(_:now:)``: which secret verified a token.
@Suite struct VerifierKeyReportTests {
    private func mint(_ secret: IdentitySecret, includeKeyID: Bool) -> String {
        IdentityTokenMinter(secret: secret, includeKeyID: includeKeyID).mint(
            IdentityClaims(subject: "u", expiration: Fixture.now.addingTimeInterval(60)))
    }

    @Test(arguments: [true, false])
    func reportsTheSecretThatVerified(includeKeyID: Bool) throws {
        let verifier = Fixture.verifier(secrets: [Fixture.secret, Fixture.otherSecret])
        for secret in [Fixture.secret, Fixture.otherSecret] {
            let result = try verifier.verifyReportingKey(mint(secret, includeKeyID: includeKeyID), now: Fixture.now)
            #expect(result.keyID == secret.kid)
            #expect(result.claims.subject == "u")
        }
    }

    @Test func aTokenOfNoActiveSecretIsRefused() throws {
        let verifier = Fixture.verifier(secrets: [Fixture.secret])
        #expect(throws: TokenError.self) {
            try verifier.verifyReportingKey(mint(Fixture.otherSecret, includeKeyID: false), now: Fixture.now)
        }
    }
}
