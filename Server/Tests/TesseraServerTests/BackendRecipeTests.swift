import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

// recipe:begin (quoted verbatim in docs/BACKENDS.md; Server/Tests/backends/run.py checks it)
/// What a Swift app backend needs from Tessera, with `TesseraTokens` alone.
struct TesseraBackend {
    let projectID: String
    /// The server's base URL: the `iss` of its session JWTs.
    let issuer: String
    let identitySecret: IdentitySecret

    /// An identity token for the SDK to exchange at `POST /v1/sessions/identify`.
    func identityToken(for userID: String, email: String? = nil, now: Date = Date()) -> String {
        IdentityTokenMinter(secret: identitySecret).mint(
            IdentityClaims(
                subject: userID, expiration: now.addingTimeInterval(60), audience: [projectID], issuedAt: now,
                tokenID: UUID().uuidString, email: email))
    }

    /// The claims of a session JWT the app sent, verified offline with the project's JWKS
    /// (`GET /v1/projects/{id}/jwks.json`; cache it, and fetch it again when a `kid` is unknown).
    func verifiedUser(sessionJWT: String, jwks: [UInt8], now: Date = Date()) throws -> SessionClaims {
        let verifier = try SessionJWTVerifier(jwks: JSONWebKeySet(json: jwks), issuer: issuer, audience: projectID)
        let claims = try verifier.verify(sessionJWT, now: now, leeway: 60)
        // anonymous and unverified sessions prove nothing about who the user is.
        guard claims.kind == "verified" else { throw TokenError(.invalidClaims, "Not a verified session.") }
        return claims  // claims.subject is the Tessera profile ID, claims.externalID your user ID
    }
}
// recipe:end

@Suite("docs/BACKENDS.md: the Swift recipe against the server")
struct BackendRecipeTests {
    @Test("Mint with TesseraTokens, identify, verify the session JWT through the JWKS, refuse anonymous")
    func swiftRecipe() async throws {
        try await TestEnvironment.withApp { environment, client in
            let backend = TesseraBackend(
                projectID: environment.project.project.id, issuer: "https://tessera.test",
                identitySecret: environment.project.identitySecret)
            let now = environment.clock.now
            let identified = try await client.identify(token: backend.identityToken(for: "swift-user", now: now))
            #expect(identified.status == .ok)
            let jwks = try await client.send(.get, "/v1/projects/\(environment.project.project.id)/jwks.json").body
            let claims = try backend.verifiedUser(sessionJWT: try #require(identified.sessionJWT), jwks: jwks, now: now)
            #expect(claims.externalID == "swift-user")
            #expect(claims.sessionID == identified.sessionID)
            let anonymous = try await client.anonymous()
            #expect(throws: TokenError.self) {
                try backend.verifiedUser(sessionJWT: anonymous.sessionJWT ?? "", jwks: jwks, now: now)
            }
            let guide = try String(contentsOf: Self.root.appendingPathComponent("docs/BACKENDS.md"), encoding: .utf8)
            let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
            let recipe = try #require(
                source.range(of: "// recipe:begin").flatMap { begin in
                    source.range(of: "// recipe:end").map { end in source[begin.lowerBound..<end.upperBound] }
                })
            #expect(guide.contains(String(recipe)), "docs/BACKENDS.md quotes the Swift recipe verbatim")
        }
    }

    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }
}
