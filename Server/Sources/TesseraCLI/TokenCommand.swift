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

    /// `tessera token mint --sub ID [--kid] [--aud] [--name] [--email] [--ttl]`, the secret from
    /// `TESSERA_IDENTITY_SECRET`, `--identity-secret-stdin` or `--identity-secret`
    struct Mint: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a signed identity token (HS256).")

        @Option(
            help:
                "The project's identity secret (visible to other users in the process list: prefer TESSERA_IDENTITY_SECRET or --identity-secret-stdin)."
        )
        var identitySecret: String?

        @Flag(help: "Read the identity secret from the first line of standard input.")
        var identitySecretStdin = false

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
            let value: String
            if identitySecretStdin {
                guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                    throw ValidationError("--identity-secret-stdin: standard input holds no secret")
                }
                value = line
            } else if let identitySecret {
                value = identitySecret
            } else if let environment = ProcessInfo.processInfo.environment["TESSERA_IDENTITY_SECRET"],
                !environment.isEmpty
            {
                value = environment
            } else {
                throw ValidationError(
                    "give the identity secret: TESSERA_IDENTITY_SECRET, --identity-secret-stdin or --identity-secret")
            }
            let secret: IdentitySecret
            do {
                secret = try IdentitySecret(kid: kid ?? "default", value: value)
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
