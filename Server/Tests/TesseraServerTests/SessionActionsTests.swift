import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// ``SessionActions`` called directly, with plain inputs and no router, against a real store.
@Suite("Session actions")
struct SessionActionsTests {
    private static let address = "203.0.113.7"

    private func make(_ backend: StoreBackend, settings: ProjectSettings = ProjectSettings()) async throws -> (
        TestEnvironment, SessionActions, ProjectRuntime
    ) {
        let environment = try await TestEnvironment.make(backend: backend, settings: settings)
        let core = TesseraCore(
            store: environment.store, configuration: environment.configuration, metrics: ServerMetrics())
        let runtime = try #require(try await core.projects.runtime(projectID: environment.project.project.id))
        return (environment, SessionActions(core: core), runtime)
    }

    private func identifyInput(_ token: String) -> Result<IdentifyInput, any Error> {
        .success(IdentifyInput(identityToken: token))
    }

    @Test(
        "Identify promotes the calling anonymous session's profile, at the request's one clock reading",
        arguments: StoreBackend.allCases)
    func identifyPromotes(backend: StoreBackend) async throws {
        let (environment, actions, runtime) = try await make(backend)
        // A reading other than the configuration's clock: every write of the request must use it.
        let now = environment.clock.now.addingTimeInterval(7)
        let seconds = Int64(now.timeIntervalSince1970)
        let started = try await actions.startAnonymous(
            runtime: runtime,
            input: AnonymousStartInput(
                installationID: UUID().uuidString.lowercased(), installationSecret: OpaqueToken.installationSecret()),
            proof: nil, clientAddress: Self.address, now: now)
        #expect(started.createdInstallation)
        #expect(started.context.profile.kind == .anonymous)
        #expect(started.context.session.createdAt == seconds)
        let caller = try await actions.core.credentials.session(token: try #require(started.token))

        let grant = try await actions.identify(
            runtime: runtime, caller: caller,
            input: identifyInput(environment.identityToken(sub: "user-1", jti: "jti-1", name: "Ada")), proof: nil,
            clientAddress: Self.address, now: now)
        #expect(grant.now == seconds)
        #expect(grant.context.session.createdAt == seconds)
        #expect(grant.context.session.kind == .verified)
        #expect(grant.context.profile.id == started.context.profile.id)
        #expect(grant.context.profile.externalID == "user-1")
        #expect(grant.context.profile.name == "Ada")
        let merge = try #require(grant.merge ?? nil)
        #expect(merge.outcome == .promoted)
        #expect(merge.fromProfileID == started.context.profile.id)
        // The anonymous session ended with the promotion, at the same reading.
        let ended = try #require(try await environment.store.sessionContext(sessionID: caller.context.session.id))
        #expect(ended.session.revokedAt == seconds)

        // The same token again is a replay, refused and changing nothing.
        await #expect(throws: CoreError.self) {
            _ = try await actions.identify(
                runtime: runtime, caller: nil,
                input: identifyInput(environment.identityToken(sub: "user-1", jti: "jti-1")), proof: nil,
                clientAddress: Self.address, now: now)
        }
        // Signing in again without a caller finds the same profile.
        let again = try await actions.identify(
            runtime: runtime, caller: nil, input: identifyInput(environment.identityToken(sub: "user-1")),
            proof: nil, clientAddress: Self.address, now: now)
        #expect(again.context.profile.id == started.context.profile.id)
        #expect((again.merge ?? nil) == nil)
    }

    @Test(
        "Failed identifies count on the client address; a blocked one is refused before its body is read",
        arguments: StoreBackend.allCases)
    func identifyRateLimits(backend: StoreBackend) async throws {
        var settings = ProjectSettings()
        settings.rateLimits.failedIdentifiesPerMinute = 2
        let (environment, actions, runtime) = try await make(backend, settings: settings)
        let now = environment.clock.now
        var codes: [ErrorCode] = []
        for _ in 0..<3 {
            do {
                _ = try await actions.identify(
                    runtime: runtime, caller: nil, input: identifyInput("not.a.token"), proof: nil,
                    clientAddress: Self.address, now: now)
            } catch let error as CoreError {
                codes.append(error.code)
            }
        }
        #expect(codes.count == 3)
        #expect(codes.last == .rateLimited)
        #expect(codes.first != .rateLimited)
        // Blocked: even a body that could not be read is answered rate_limited, and a good token too.
        do {
            _ = try await actions.identify(
                runtime: runtime, caller: nil, input: .failure(CoreError.invalidRequest("unreadable")), proof: nil,
                clientAddress: Self.address, now: now)
            Issue.record("A blocked address was not refused.")
        } catch let error as CoreError {
            #expect(error.code == .rateLimited)
        }
        // Another address is not blocked.
        let other = try await actions.identify(
            runtime: runtime, caller: nil, input: identifyInput(environment.identityToken(sub: "user-2")), proof: nil,
            clientAddress: "198.51.100.1", now: now)
        #expect(other.context.profile.externalID == "user-2")
    }
}
