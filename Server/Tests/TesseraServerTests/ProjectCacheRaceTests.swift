import Synchronization
import TesseraTokens
import Testing

@testable import TesseraServer

/// Runs `action` once, from inside the cache's clock, the next time the clock is read after arming.
private final class ClockHook: Sendable {
    private let action = Mutex<(@Sendable () -> Void)?>(nil)

    func arm(_ body: @escaping @Sendable () -> Void) { action.withLock { $0 = body } }

    func fire() {
        let body = action.withLock { current -> (@Sendable () -> Void)? in
            defer { current = nil }
            return current
        }
        body?()
    }
}

@Suite("Project cache: a load that overlaps an invalidation")
struct ProjectCacheRaceTests {
    /// Found by the crash harness (seed 501, PostgreSQL): right after a rotation with grace 0 was
    /// acknowledged, the rotated-out publishable key was still accepted. A request had started
    /// loading the project before the rotation committed and cached what it read after the
    /// rotation's invalidation, so the old keys stood for the cache's time-to-live.
    @Test("A project loaded across an invalidation is not cached: the next request reads the change")
    func loadAcrossInvalidation() async throws {
        let environment = try await TestEnvironment.make()
        let clock = environment.clock
        let hook = ClockHook()
        let cache = ProjectCache(
            store: environment.store, timeToLiveSeconds: 60, retiredKeyWindow: 365,
            now: {
                hook.fire()
                return clock.seconds
            })
        let projectID = environment.project.project.id
        let before = try #require(try await cache.runtime(projectID: projectID)).keyRing.signingKeyID
        cache.invalidate(projectID: projectID)

        // The clock is first read in the middle of the load, after the signing keys were read: an
        // invalidation lands there, as a rotation's would between its commit and the load's end.
        hook.arm { cache.invalidate(projectID: projectID) }
        let loaded = try #require(try await cache.runtime(projectID: projectID))
        #expect(loaded.keyRing.signingKeyID == before)
        // The change that invalidation announced (committed before it, in the real interleaving).
        let key = SessionSigningKey.generate()
        try await environment.store.rotateSessionKey(
            projectID: projectID,
            newKey: SessionKeyRecord(
                kid: key.kid, privateKey: key.privateKeyRawRepresentation, createdAt: clock.seconds),
            now: clock.seconds)

        let next = try #require(try await cache.runtime(projectID: projectID))
        #expect(next.keyRing.signingKeyID == key.kid, "the load that overlapped the invalidation was cached")
    }
}
