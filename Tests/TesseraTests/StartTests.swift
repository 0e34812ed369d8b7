import Foundation
import Testing

@testable import Tessera

@Suite("start()")
struct StartTests {
    @Test("The first start creates an installation and an anonymous session")
    func firstStartIsAnonymous() async throws {
        let harness = Harness()
        #expect(harness.client.sessionState == .unavailable(.neverSignedIn))
        try await harness.client.start()
        #expect(harness.transport.log == ["POST /v1/sessions/anonymous"])
        let session = try #require(harness.client.sessionState.value)
        let profile = try #require(await harness.client.profile)
        #expect(profile.kind == .anonymous)
        #expect(session.profileID == profile.id)
        let stored = try #require(try harness.storedState())
        #expect(stored.session?.session.id == session.id)
        #expect(stored.installationSecret.count >= 43)
        #expect(await harness.client.capabilities == Capabilities(authenticated: false, kind: .anonymous))
        #expect(await harness.client.appAccountToken == stored.installationID)
        await harness.client.stop()
    }

    @Test("Concurrent start() calls share one run")
    func concurrentStartsShareOneRun() async throws {
        let harness = Harness()
        harness.server.hold("POST /v1/sessions/anonymous")
        let client = harness.client
        async let first: Void = client.start()
        async let second: Void = client.start()
        async let third: Void = client.start()
        let exchange = await harness.transport.next()
        await client.waitForSharedRequestJoins(2)
        exchange.respond(harness.server.reply(to: exchange.request))
        _ = try await (first, second, third)
        #expect(harness.transport.count("POST /v1/sessions/anonymous") == 1)
        try await client.start()
        #expect(harness.transport.log.count == 1)
        await client.stop()
    }

    @Test("A second client on the same store restores the same installation and profile without network")
    func relaunchRestoresWithoutNetwork() async throws {
        let harness = Harness()
        try await harness.client.start()
        let profile = try #require(await harness.client.profile)
        let installation = await harness.client.installationID
        await harness.client.stop()

        let relaunched = harness.relaunch()
        relaunched.transport.setHandler { request in
            Issue.record("no request expected, got \(request.url?.path ?? "")")
            return .failure(.notConnectedToInternet)
        }
        try await relaunched.client.start()
        #expect(await relaunched.client.installationID == installation)
        #expect(await relaunched.client.profile == profile)
        #expect(relaunched.client.sessionState.value != nil)
        #expect(relaunched.transport.log.isEmpty)
        await relaunched.client.stop()
    }

    @Test("A restored session older than one interval is validated by the heartbeat at once")
    func staleRestoredSessionIsValidated() async throws {
        let harness = Harness()
        try await harness.start(quiet: true)
        harness.clock.advance(by: .seconds(600))
        let relaunched = harness.relaunch()
        relaunched.server.hold("POST /v1/sessions/authenticate")
        try await relaunched.client.start()
        let exchange = await relaunched.transport.next()  // arrives without moving the clock
        #expect(exchange.endpoint == "POST /v1/sessions/authenticate")
        exchange.respond(relaunched.server.reply(to: exchange.request))
        let recorder = Recorder(relaunched.client.sessionUpdates)
        _ = await recorder.first {
            if case .available(_, let validated) = $0 { return validated == relaunched.clock.now() }
            return false
        }
        await relaunched.client.stop()
    }

    @Test("A restored session that expired in server time is replaced by a fresh anonymous session")
    func expiredRestoredSessionIsReplaced() async throws {
        let harness = Harness()
        try await harness.client.start()
        let first = try #require(harness.client.sessionState.value)
        await harness.client.stop()
        harness.clock.advance(by: .seconds(31 * 86400))
        let relaunched = harness.relaunch()
        try await relaunched.client.start()
        let second = try #require(relaunched.client.sessionState.value)
        #expect(second.id != first.id)
        #expect(second.profileID == first.profileID, "an anonymous session ending keeps the installation's profile")
        await relaunched.client.stop()
    }

    @Test("Offline first start keeps the installation and retries with backoff")
    func offlineFirstStart() async throws {
        let harness = Harness(random: 0.5)
        harness.server.script("POST /v1/sessions/anonymous", .failure(.notConnectedToInternet))
        await #expect(throws: TesseraError.self) { try await harness.client.start() }
        let installation = try #require(await harness.client.installationID)
        #expect(try harness.storedState()?.installationID == installation)
        await harness.clock.waitForSleepers(count: 1)
        #expect(harness.clock.sleeperDeadlines == [harness.clock.now().addingTimeInterval(2)])
        harness.clock.advance(by: .seconds(2))
        let recorder = Recorder(harness.client.sessionUpdates)
        _ = await recorder.first { $0.value != nil }
        #expect(await harness.client.installationID == installation)
        await harness.client.stop()
    }
}
