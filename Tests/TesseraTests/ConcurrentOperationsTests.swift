import Foundation
import Testing

@testable import Tessera

/// Bursts of operations launched at once on one client, on the real cooperative thread pool (no
/// scripted order): the SDK's share of the race tests that runs in the root package, fast enough for
/// the thread sanitizer (`swift test --sanitize=thread`). The seeded, gated interleavings against a live
/// server are in the server package (`SDKRaceTests`).
@Suite("Concurrent operations on one client")
struct ConcurrentOperationsTests {
    enum Operation: CaseIterable {
        case identifyAlice, identifyBob, identifyAsserted, signOut, reset, refreshSession, authenticate, extend
        case registerDevice, heartbeat, authorizationHeader, refreshProfile, serverRevoke, start, hydrate
        case clearSession
    }

    @Test(
        "Seeded bursts: what is stored is what is published, and no session but the current one is alive",
        arguments: 0..<4)
    func bursts(batch: Int) async throws {
        for run in 0..<40 {
            try await burst(seed: UInt64(batch) << 32 | UInt64(run))
        }
    }

    private func burst(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let provider = ClosureIdentityTokenProvider { request in
            FakeServer.identityToken(sub: request.externalUserID ?? "nobody")
        }
        let harness = Harness(provider: provider)
        let client = harness.client
        let updates = Recorder(client.sessionUpdates)
        let events = Recorder(client.events)
        let operations = (0..<(3 + random.index(8))).map { _ in
            Operation.allCases[random.index(Operation.allCases.count)]
        }
        await withTaskGroup(of: Void.self) { group in
            for operation in operations {
                group.addTask { try? await Self.perform(operation, harness: harness) }
            }
        }
        await client.stop()
        // stop() ends the heartbeat loop, not a check it already sent: what that check learns lands
        // when its answer does. Compare once nothing is under way (seen once in a loaded run: the
        // store read before a heartbeat's answer, the client's state after it).
        var awaited: Task<Void, Never>?
        while true {
            while await client.isWorking { await Task.yield() }
            guard let background = await client.reestablishTask, background != awaited else { break }
            await background.value
            awaited = background
        }

        let context = "seed \(seed), operations \(operations)"
        let stored = try harness.storedState()
        let current = await client.state
        #expect(stored == current, "the store holds what the client holds (\(context))")
        #expect(client.sessionState.value?.id == current?.session?.session.id, "published = held (\(context))")
        #expect(client.profileState.value?.id == current?.session?.profile.id, "published = held (\(context))")
        let survivors = harness.server.liveSessions.filter { $0.token != current?.session?.token }
        #expect(survivors.isEmpty, "\(survivors.count) sessions alive besides the current one (\(context))")
        #expect(current?.pendingRevocations.isEmpty != false, "revocations left queued (\(context))")
        let devices = harness.server.devices.filter { $0.sessionID != current?.session?.session.id }
        #expect(devices.isEmpty, "push tokens bound to a session the client no longer holds (\(context))")
        // The stream delivers the published state (it may still be on its way to the recorder).
        let published = client.sessionState
        _ = await updates.first { $0 == published }
        _ = events.values
    }

    private static func perform(_ operation: Operation, harness: Harness) async throws {
        let client = harness.client
        switch operation {
        case .identifyAlice: try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        case .identifyBob: try await client.identify(signedIdentityToken: FakeServer.identityToken(sub: "bob"))
        case .identifyAsserted: try await client.identify(userID: "carol")
        case .signOut: try await client.signOut()
        case .reset: try await client.reset()
        case .refreshSession: try await client.refreshSession()
        case .authenticate: try await client.sessions.authenticate()
        case .extend: try await client.sessions.authenticate(duration: .seconds(86_400))
        case .registerDevice: try await client.registerDeviceToken("push", platform: .fcm, environment: .sandbox)
        case .heartbeat: harness.clock.advance(by: .seconds(181))
        case .authorizationHeader: _ = try await client.authorizationHeader()
        case .refreshProfile: try await client.refreshProfile()
        case .serverRevoke:
            if let token = await client.sessions.token { harness.server.end(token: token, code: "session_revoked") }
        case .start: try await client.start()
        case .hydrate:
            let token = harness.server.mintSession(sub: "dave")
            try await client.sessions.update(tokens: SessionTokens(sessionToken: token))
        case .clearSession: try await client.clearSession()
        }
    }
}
