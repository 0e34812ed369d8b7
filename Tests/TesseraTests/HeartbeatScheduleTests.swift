import Foundation
import Testing

@testable import Tessera

@Suite("Heartbeat schedule: delays, backoff and re-establishment serials")
struct HeartbeatScheduleTests {
    let configuration = Fixtures.configuration()
    let clock = ManualClock(now: Fixtures.epoch)

    @Test("Backoff: failures count up, a success or the failure after maxAttempts starts over")
    func backoff() {
        var backoff = Heartbeat.Backoff()
        backoff.record(.transientFailure(retryAfter: .seconds(9)), maxAttempts: 2)
        #expect(backoff.failures == 1 && backoff.retryAfter == .seconds(9))
        backoff.record(.transientFailure(retryAfter: nil), maxAttempts: 2)
        #expect(backoff.failures == 2 && backoff.retryAfter == nil)
        backoff.record(.transientFailure(retryAfter: .seconds(9)), maxAttempts: 2)
        #expect(backoff == Heartbeat.Backoff(), "past maxAttempts the normal interval resumes")
        backoff.record(.transientFailure(retryAfter: nil), maxAttempts: 2)
        backoff.record(.done, maxAttempts: 2)
        #expect(backoff == Heartbeat.Backoff())
    }

    @Test("The next check is one interval after the last one; failures back off, Retry-After wins when longer")
    func nextDelay() {
        var heartbeat = Heartbeat()
        let state = Fixtures.state(session: Fixtures.session("s1", validatedAt: Fixtures.epoch))
        clock.advance(by: .seconds(60))
        #expect(heartbeat.nextDelay(.init(), state: state, clock: clock, configuration: configuration) == .seconds(120))
        heartbeat.lastAttemptAt = clock.now()
        #expect(heartbeat.nextDelay(.init(), state: state, clock: clock, configuration: configuration) == .seconds(180))
        var backoff = Heartbeat.Backoff()
        backoff.record(.transientFailure(retryAfter: nil), maxAttempts: 5)
        backoff.record(.transientFailure(retryAfter: nil), maxAttempts: 5)
        #expect(heartbeat.nextDelay(backoff, state: state, clock: clock, configuration: configuration) == .seconds(4))
        backoff.record(.transientFailure(retryAfter: .seconds(30)), maxAttempts: 5)
        #expect(heartbeat.nextDelay(backoff, state: state, clock: clock, configuration: configuration) == .seconds(30))
        #expect(
            heartbeat.nextDelay(.init(), state: nil, clock: clock, configuration: configuration) == .seconds(2),
            "no state yet: the store is retried soon")
    }

    @Test(
        "Without a session, the anonymous one is retried with backoff, then once per interval after a permanent failure"
    )
    func establishRetries() {
        var heartbeat = Heartbeat()
        let empty = Fixtures.state()
        #expect(heartbeat.nextDelay(.init(), state: empty, clock: clock, configuration: configuration) == .seconds(2))
        let first = heartbeat.establishFailed(isTransient: true)
        let second = heartbeat.establishFailed(isTransient: true)
        #expect(first == nil && second == nil, "transient failures are not told")
        #expect(heartbeat.nextDelay(.init(), state: empty, clock: clock, configuration: configuration) == .seconds(4))
        let permanent = heartbeat.establishFailed(isTransient: false)
        #expect(permanent == 3, "a permanent failure is told with its count")
        #expect(heartbeat.nextDelay(.init(), state: empty, clock: clock, configuration: configuration) == .seconds(180))
        heartbeat.establishSucceeded()
        #expect(heartbeat.nextDelay(.init(), state: empty, clock: clock, configuration: configuration) == .seconds(2))
        heartbeat.autoEstablish = false
        #expect(
            heartbeat.nextDelay(.init(), state: empty, clock: clock, configuration: configuration) == .seconds(180),
            "no session wanted: the normal interval")
    }

    @Test("Only the newest re-establishment clears itself when it ends")
    func reestablishmentSerials() async {
        var heartbeat = Heartbeat()
        var serials: [UInt64] = []
        heartbeat.beginReestablishment { serial in
            serials.append(serial)
            return Task {}
        }
        heartbeat.beginReestablishment { serial in
            serials.append(serial)
            return Task {}
        }
        #expect(serials == [1, 2])
        heartbeat.reestablishmentEnded(serial: 1)
        #expect(heartbeat.reestablishTask != nil, "an overtaken run does not clear the newer one")
        #expect(
            heartbeat.nextDelay(.init(), state: Fixtures.state(), clock: clock, configuration: configuration)
                == .seconds(180),
            "while a re-establishment runs, the heartbeat does not race it for a session")
        heartbeat.reestablishmentEnded(serial: 2)
        #expect(heartbeat.reestablishTask == nil)
        heartbeat.beginReestablishment { _ in Task {} }
        heartbeat.dropReestablishment()
        #expect(heartbeat.reestablishTask == nil)
    }
}
