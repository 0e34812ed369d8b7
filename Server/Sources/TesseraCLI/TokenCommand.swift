import ArgumentParser
import Foundation
import TesseraTokens

/// `tessera token`: identity tokens for tests and for backends without a JWT library.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Identity tokens.",
        subcommands: [Mint.self]
    )

    /// `tessera token mint --identity-secret S --sub ID [--kid] [--aud] [--name] [--email] [--ttl]`
    struct Mint: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a signed identity token (HS256).")

        @Option(help: "The project's identity secret.")
        var identitySecret: String

        @Option(help: "The user's stable ID in your app (the sub claim).")
        var sub: String

        @Option(help: "The secret's kid, written into the token header.")
        var kid: String?

        @Option(help: "The audience: the project ID or slug.")
        var aud: String?

        @Option(help: "The user's display name.")
        var name: String?

        @Option(help: "The user's email address.")
        var email: String?

        @Option(help: "Seconds until the token expires (default 300).")
        var ttl: Int = 300

        @Option(help: "A unique token ID, making the token single-use.")
        var jti: String?

        func run() throws {
            guard ttl > 0 else { throw ValidationError("--ttl must be positive") }
            let secret: IdentitySecret
            do {
                secret = try IdentitySecret(kid: kid ?? "default", value: identitySecret)
            } catch {
                throw ValidationError(error.message)
            }
            let now = Date()
            let claims = IdentityClaims(
                subject: sub, expiration: now.addingTimeInterval(Double(ttl)), audience: aud.map { [$0] } ?? [],
                issuedAt: now, tokenID: jti, name: name, email: email)
            print(IdentityTokenMinter(secret: secret, includeKeyID: kid != nil).mint(claims))
        }
    }
}
