import Foundation
import Testing

@testable import Tessera

/// Errors that retrying soon will not fix: a wrong publishable key, a 403, a 400, a configuration that
/// cannot work.
@Suite("Permanent errors and configuration", .timeLimit(.minutes(1)))
struct PermanentErrorTests {
    @Test(
        "A refused anonymous session is retried once per heartbeat interval, with an event and a running count",
        arguments: [
            Reply.error(401, "invalid_api_key"), .error(403, "profile_blocked"), .error(400, "invalid_request"),
        ])
    func permanentErrorBacksOffToTheInterval(reply: Reply) async throws {
        let harness = Harness(random: 0.5)
        let client = harness.client
        let events = Recorder(client.events)
        harness.server.script("POST /v1/sessions/anonymous", .reply(reply), .reply(reply), .reply(reply))
        await #expect(throws: TesseraError.self) { try await client.start() }
        let delays = try await harness.heartbeatDelays(3)
        // Before the fix: 2, 2, 4 (the backoff of a transient error, started over after every failure).
        #expect(delays == [180, 180, 180])
        _ = await Recorder(client.sessionUpdates).first { $0.value != nil }
        #expect(harness.transport.count("POST /v1/sessions/anonymous") == 4)
        _ = await events.first {
            if case .anonymousSessionFailed(_, 3) = $0 { return true }
            return false
        }
        let failures = events.values.compactMap { event -> Int? in
            guard case .anonymousSessionFailed(let error, let attempts) = event else { return nil }
            #expect(error.httpStatus == reply.status)
            return attempts
        }
        #expect(failures == [1, 2, 3])
        await client.stop()
    }

    @Test("Transient failures back off, then keep the heartbeat interval: the count is not started over")
    func transientFailuresKeepTheirCount() async throws {
        let harness = Harness(random: 0.5)
        let client = harness.client
        let events = Recorder(client.events)
        for _ in 0..<7 { harness.server.script("POST /v1/sessions/anonymous", .failure(.notConnectedToInternet)) }
        await #expect(throws: TesseraError.self) { try await client.start() }
        let delays = try await harness.heartbeatDelays(7)
        // Before the fix: 2, 2, 4, 8, 16, 32, 2 (every cycle of five started again at 2 s).
        #expect(delays == [2, 4, 8, 16, 32, 180, 180])
        _ = await Recorder(client.sessionUpdates).first { $0.value != nil }
        #expect(harness.transport.count("POST /v1/sessions/anonymous") == 8)
        #expect(events.values.isEmpty, "transient failures are not an event")
        await client.stop()
    }

    @Test(
        "A configuration that cannot work is invalid_configuration at start(), and nothing is sent",
        arguments: [
            ("", "https://id.example.com"), ("  ", "https://id.example.com"), ("pk_test", "http://id.example.com"),
            ("pk_test", "http://10.0.0.2:8080"), ("pk_test", "ftp://id.example.com"), ("pk_test", "file:///tmp/x"),
        ])
    func invalidConfiguration(key: String, url: String) async throws {
        let harness = Harness {
            $0.publishableKey = key
            $0.serverURL = URL(string: url)!
        }
        await #expect { try await harness.client.start() } throws: {
            ($0 as? TesseraError)?.code == .invalidConfiguration
        }
        await #expect { try await harness.client.identify(userID: "alice") } throws: {
            ($0 as? TesseraError)?.code == .invalidConfiguration
        }
        await #expect { try await harness.client.reset() } throws: {
            ($0 as? TesseraError)?.code == .invalidConfiguration
        }
        #expect(harness.transport.log.isEmpty)
        #expect(try harness.storedState() == nil)
        #expect(harness.clock.sleeperDeadlines.isEmpty, "no heartbeat either")
    }

    @Test(
        "https anywhere and http on loopback are valid",
        arguments: [
            "https://id.example.com", "https://10.0.0.2", "http://127.0.0.1:8080", "http://localhost:8080",
            "http://[::1]:8080", "http://127.1.2.3",
        ])
    func validConfiguration(url: String) throws {
        let configuration = TesseraConfiguration(
            serverURL: URL(string: url)!, publishableKey: "pk_test", credentialStore: InMemoryCredentialStore())
        try configuration.validate()
    }
}
