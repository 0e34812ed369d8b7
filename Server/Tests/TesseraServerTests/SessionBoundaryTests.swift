import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// The v1 changes to the existing contract: what a session may reach, extend and cache.
@Suite("Session boundaries")
struct SessionBoundaryTests {
    private func allowUnverified(_ client: APIClient) async throws {
        let patch = try await client.send(
            .patch, "/v1/admin/project", bearer: client.secretKey, body: #"{"allow_unverified_identify":true}"#)
        #expect(patch.status == .ok)
    }

    private func assert(userID: String, bearer: String? = nil, _ client: APIClient) async throws -> Reply {
        try await client.send(
            .post, "/v1/sessions/identify", bearer: bearer ?? client.publishableKey,
            body: #"{"user_id":"\#(userID)"}"#)
    }

    @Test("Every /v1 answer, errors included, is Cache-Control: no-store; the JWKS stays cacheable")
    func noStore() async throws {
        let environment = try await TestEnvironment.make()
        try await environment.withApp(.live) { client in
            let start = try await client.anonymous()
            let replies = [
                start,
                try await client.send(.get, "/v1/me", bearer: start.sessionToken),
                try await client.send(.get, "/v1/me"),
                try await client.send(.get, "/v1/me", bearer: "st_unknown"),
                try await client.send(.get, "/v1/nothing-here"),
                try await client.send(.put, "/v1/me", bearer: start.sessionToken),
                try await client.send(.post, "/v1/sessions/anonymous", bearer: client.publishableKey, body: "{"),
                try await client.send(.get, "/v1/admin/project", bearer: client.secretKey),
                try await client.send(.get, "/v1/projects/prj_unknown/jwks.json"),
            ]
            for reply in replies {
                #expect(reply.headers[.cacheControl] == "no-store", "\(reply.status)")
            }
            let jwks = try await client.send(.get, "/v1/projects/\(environment.project.project.id)/jwks.json")
            #expect(jwks.headers[.cacheControl] == "public, max-age=300")
        }
    }
}
