import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

@Suite("Concurrency")
struct ConcurrencyTests {
    @Test("50 parallel identifies of one sub from 50 installations give one profile")
    func parallelIdentifies() async throws {
        try await TestEnvironment.withApp { environment, client in
            var anonymousTokens: [String] = []
            for _ in 0..<50 {
                anonymousTokens.append(try #require(try await client.anonymous().sessionToken))
            }
            let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                for token in anonymousTokens {
                    group.addTask {
                        try await client.identify(sub: "crowd", bearer: token)
                    }
                }
                return try await group.reduce(into: [Reply]()) { $0.append($1) }
            }
            #expect(replies.allSatisfy { $0.status == .ok })
            #expect(Set(replies.compactMap(\.profileID)).count == 1)
            let outcomes = replies.compactMap { $0["merge"]["outcome"] as? String }
            #expect(outcomes.filter { $0 == "promoted" }.count == 1)
            #expect(outcomes.filter { $0 == "merged" }.count == 49)
            let profiles = try await environment.store.profiles(
                projectID: environment.project.project.id, externalID: "crowd")
            #expect(profiles.count == 1)
        }
    }

    @Test("50 parallel uses of one jti token give exactly one success")
    func parallelReplay() async throws {
        try await TestEnvironment.withApp { environment, client in
            let token = environment.identityToken(sub: "single", jti: "the-one")
            let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                for _ in 0..<50 {
                    group.addTask { try await client.identify(token: token) }
                }
                return try await group.reduce(into: [Reply]()) { $0.append($1) }
            }
            #expect(replies.filter { $0.status == .ok }.count == 1)
            #expect(replies.filter { $0.errorCode == "identity_token_replayed" }.count == 49)
        }
    }

    @Test("Parallel extends and a revoke on one session leave it revoked")
    func extendsAndRevoke() async throws {
        try await TestEnvironment.withApp { environment, client in
            let session = try await client.anonymous()
            let token = try #require(session.sessionToken)
            let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        if index == 20 {
                            return try await client.send(.post, "/v1/sessions/revoke", bearer: token)
                        }
                        return try await client.send(
                            .post, "/v1/sessions/authenticate", bearer: token,
                            body: #"{"session_duration_minutes":600}"#)
                    }
                }
                return try await group.reduce(into: [Reply]()) { $0.append($1) }
            }
            #expect(replies.allSatisfy { [200, 204, 401].contains($0.status.code) })
            let after = try await client.send(.post, "/v1/sessions/authenticate", bearer: token)
            #expect(after.errorCode == "session_revoked")
            let stored = try await environment.store.sessionContext(sessionID: try #require(session.sessionID))
            #expect(stored?.session.revokedAt != nil)
        }
    }
}
