import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// The heartbeat's session lookup without suspending (SQLite reads on the request's thread, the
/// project from the cache), against the awaited lookup it stands in for, on every backend.
@Suite("Heartbeat path")
struct HeartbeatPathTests {
    /// A live anonymous session of the environment's project, written through the store; its token.
    private func startSession(_ environment: TestEnvironment, minutes: Int64 = 60) async throws -> (
        token: String, context: SessionContext
    ) {
        let token = OpaqueToken.sessionToken()
        let now = environment.clock.seconds
        let session = SessionRecord(
            id: OpaqueToken.identifier(prefix: "ses_"), projectID: environment.project.project.id, profileID: "",
            installationID: nil, kind: .anonymous, createdAt: now, lastAuthenticatedAt: now,
            expiresAt: now + minutes * 60)
        let started = try await environment.store.startAnonymousSession(
            AnonymousStart(
                projectID: environment.project.project.id, installationID: UUID().uuidString.lowercased(),
                installationSecretHash: OpaqueToken.sha256(OpaqueToken.installationSecret()),
                newProfileID: OpaqueToken.identifier(prefix: "usr_"), newSession: session,
                sessionTokenHash: OpaqueToken.sha256(token)))
        return (token, started.context)
    }

    /// The error code `body` throws, nil when it throws none.
    private func code(_ body: () throws -> Void) -> ErrorCode? {
        do {
            try body()
            return nil
        } catch let error as CoreError {
            return error.code
        } catch {
            return .internalError
        }
    }

    private func asyncCode(_ body: () async throws -> Void) async -> ErrorCode? {
        do {
            try await body()
            return nil
        } catch let error as CoreError {
            return error.code
        } catch {
            return .internalError
        }
    }

    @Test(
        "The store's lookup without suspending answers as the awaited one, or leaves it to it",
        arguments: StoreBackend.allCases)
    func storeLookup(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        let (token, context) = try await startSession(environment)
        let hash = OpaqueToken.sha256(token)
        let awaited = try await environment.store.sessionContext(tokenHash: hash)
        let quick = try environment.store.sessionContextWithoutSuspending(tokenHash: hash)
        let unknown = try environment.store.sessionContextWithoutSuspending(
            tokenHash: OpaqueToken.sha256(OpaqueToken.sessionToken()))
        switch backend {
        case .sqlite:
            // The heartbeat's path on SQLite: the row, read on this thread.
            #expect(quick == .some(awaited))
            #expect(quick??.session.id == context.session.id)
            #expect(quick??.profile.id == context.profile.id)
            #expect(unknown == .some(nil))
        case .postgres:
            // A round trip to the database cannot be made without suspending.
            #expect(quick == nil)
            #expect(unknown == nil)
        }
    }

    @Test(
        "A session token resolves without suspending once its project is cached, and refuses as the awaited path",
        arguments: StoreBackend.allCases)
    func resolver(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        let core = TesseraCore(
            store: environment.store, configuration: environment.configuration, metrics: ServerMetrics())
        let (token, context) = try await startSession(environment, minutes: 10)
        // Nothing cached yet: left to the awaited path, which loads the project.
        #expect(try core.credentials.sessionWithoutSuspending(token: token) == nil)
        let awaited = try await core.credentials.session(token: token)
        #expect(awaited.context.session.id == context.session.id)
        let quick = try core.credentials.sessionWithoutSuspending(token: token)
        if backend == .sqlite {
            let caller = try #require(quick)
            #expect(caller.context == awaited.context)
            #expect(caller.runtime.id == environment.project.project.id)
            #expect(caller.sessionToken == token)
        } else {
            #expect(quick == nil)
        }
        // An unknown token, an expired session, a revoked one: the same refusal either way (on
        // PostgreSQL the path without suspending answers nil, and the awaited one refuses).
        let unknown = OpaqueToken.sessionToken()
        #expect(await asyncCode { _ = try await core.credentials.session(token: unknown) } == .sessionNotFound)
        #expect(
            code { _ = try core.credentials.sessionWithoutSuspending(token: unknown) }
                == (backend == .sqlite ? .sessionNotFound : nil))
        environment.clock.advance(seconds: 601)
        #expect(await asyncCode { _ = try await core.credentials.session(token: token) } == .sessionExpired)
        #expect(
            code { _ = try core.credentials.sessionWithoutSuspending(token: token) }
                == (backend == .sqlite ? .sessionExpired : nil))
        let (other, otherContext) = try await startSession(environment)
        _ = try await environment.store.revokeSession(
            sessionID: otherContext.session.id, profileID: nil, now: environment.clock.seconds, reason: .signedOut,
            origin: .system)
        #expect(await asyncCode { _ = try await core.credentials.session(token: other) } == .sessionRevoked)
        #expect(
            code { _ = try core.credentials.sessionWithoutSuspending(token: other) }
                == (backend == .sqlite ? .sessionRevoked : nil))
    }
}
