import Foundation
import Testing

@testable import Tessera

@Suite("Heartbeat and backoff")
struct HeartbeatTests {
    @Test("The heartbeat fires at interval × (1 ± 10 %), check-only", arguments: [0.0, 0.5, 0.999_999])
    func heartbeatTimingAndJitter(random: Double) async throws {
        let harness = Harness(random: random)
        try await harness.client.start()
        let started = harness.clock.now()
        await harness.clock.waitForSleepers(count: 1)
        let deadline = try #require(harness.clock.sleeperDeadlines.first)
        let interval = deadline.timeIntervalSince(started)
        #expect(interval >= 162 && interval <= 198)
        #expect(abs(interval - 180 * (1 + 0.1 * (2 * random - 1))) < 0.002)
        harness.server.hold("POST /v1/sessions/authenticate")
        harness.clock.advance(to: deadline.addingTimeInterval(-0.01))
        #expect(harness.transport.count("POST /v1/sessions/authenticate") == 0)
        harness.clock.advance(to: deadline)
        let exchange = await harness.transport.next()
        #expect(exchange.endpoint == "POST /v1/sessions/authenticate")
        let body = try JSONSerialization.jsonObject(with: exchange.request.httpBody ?? Data()) as? [String: Any]
        #expect(body?["session_duration_minutes"] == nil, "the heartbeat only checks")
        #expect(exchange.bearer?.hasPrefix("st_") == true)
        exchange.respond(harness.server.reply(to: exchange.request))
        await harness.clock.waitForSleepers(count: 1)
        await harness.client.stop()
    }

    @Test("The work probe: busy while a heartbeat's check is out or being digested, idle once the heartbeat sleeps")
    func workProbe() async throws {
        let harness = Harness(random: 0.5)
        let client = try await harness.start()
        await harness.clock.waitForSleepers(count: 1)
        #expect(await !client.isWorking)
        harness.server.hold("POST /v1/sessions/authenticate")
        harness.clock.advance(by: .seconds(180))
        let exchange = await harness.transport.next()
        #expect(exchange.endpoint == "POST /v1/sessions/authenticate")
        #expect(await client.isWorking)
        exchange.respond(harness.server.reply(to: exchange.request))
        await harness.clock.waitForSleepers(count: 1)
        #expect(await !client.isWorking)
        await client.stop()
    }

    @Test("Jitter draws differ between beats (real jitter)")
    func jitterVaries() async throws {
        let harness = Harness(random: 0.1)
        try await harness.client.start()
        await harness.clock.waitForSleepers(count: 1)
        let first = try #require(harness.clock.sleeperDeadlines.first).timeIntervalSince(harness.clock.now())
        harness.random.withLock { $0 = 0.9 }
        harness.clock.advance(by: .seconds(first))
        await harness.clock.waitForSleepers(count: 1)
        #expect(harness.transport.count("POST /v1/sessions/authenticate") == 1)
        let second = try #require(harness.clock.sleeperDeadlines.first).timeIntervalSince(harness.clock.now())
        #expect(abs(first - 180 * 0.92) < 0.002)
        #expect(abs(second - 180 * 1.08) < 0.002)
        await harness.client.stop()
    }

    @Test(
        "5xx, 429 and offline keep the session and back off exponentially with jitter",
        arguments: [
            Outcome.reply(.error(503, "unavailable")), .failure(.notConnectedToInternet), .failure(.timedOut),
            .reply(.error(500, "internal")),
        ])
    func backoff(failure: Outcome) async throws {
        let harness = Harness(random: 0.5)
        let client = try await harness.start()
        let session = try #require(await client.sessions.current)
        for _ in 0..<3 { harness.server.script("POST /v1/sessions/authenticate", failure) }
        await harness.clock.waitForSleepers(count: 1)
        harness.clock.advance(by: .seconds(180))
        let delays = try await harness.heartbeatDelays(3)
        #expect(delays == [2, 4, 8])
        await harness.clock.waitForSleepers(count: 1)
        #expect(harness.transport.count("POST /v1/sessions/authenticate") == 4)
        #expect(await client.sessions.current == session)
        #expect(client.sessionState.value == session)
        await client.stop()
    }

    @Test("Backoff jitter stays within ±50 % of the exponential base")
    func backoffJitterBounds() {
        let policy = BackoffPolicy()
        for attempt in 0..<8 {
            let base = min(2 * pow(2, Double(attempt)), 300)
            #expect(policy.delay(attempt: attempt, random: 0).timeInterval == base * 0.5)
            #expect(abs(policy.delay(attempt: attempt, random: 0.999_999).timeInterval - base * 1.5) < 0.01)
        }
    }

    @Test("429 Retry-After is honoured as the lower bound of the next retry")
    func retryAfter() async throws {
        let harness = Harness(random: 0.5)
        try await harness.client.start()
        harness.server.script(
            "POST /v1/sessions/authenticate", .reply(.error(429, "rate_limited", headers: ["Retry-After": "30"])))
        await harness.clock.waitForSleepers(count: 1)
        harness.clock.advance(by: .seconds(180))
        await harness.clock.waitForSleepers(count: 1)
        #expect(harness.transport.count("POST /v1/sessions/authenticate") == 1)
        let next = try #require(harness.clock.sleeperDeadlines.first)
        #expect(next.timeIntervalSince(harness.clock.now()) == 30)
        #expect(harness.client.sessionState.value != nil)
        await harness.client.stop()
    }

    @Test("Background pauses the heartbeat; foreground checks at once when stale")
    func backgroundAndForeground() async throws {
        let harness = Harness()
        let client = try await harness.start()
        await harness.clock.waitForSleepers(count: 1)
        await client.enterBackground()
        #expect(harness.clock.sleeperDeadlines.isEmpty)
        harness.clock.advance(by: .seconds(1000))
        #expect(harness.transport.count("POST /v1/sessions/authenticate") == 0)
        harness.server.hold("POST /v1/sessions/authenticate")
        await client.enterForeground()
        let exchange = await harness.transport.next()
        #expect(exchange.endpoint == "POST /v1/sessions/authenticate")
        exchange.respond(harness.server.reply(to: exchange.request))
        await harness.clock.waitForSleepers(count: 1)
        await client.stop()
    }

    @Test("Foreground within the interval does not check early")
    func foregroundFresh() async throws {
        let harness = Harness(random: 0.5)
        let client = try await harness.start()
        await client.enterBackground()
        harness.clock.advance(by: .seconds(60))
        await client.enterForeground()
        await harness.clock.waitForSleepers(count: 1)
        let next = try #require(harness.clock.sleeperDeadlines.first)
        #expect(next.timeIntervalSince(harness.clock.now()) == 120)
        #expect(harness.transport.count("POST /v1/sessions/authenticate") == 0)
        await client.stop()
    }
}
