import Foundation
import Testing

@testable import Tessera

@Suite("Lifecycle events")
struct LifecycleTests {
    static let background = Notification.Name("test.background")
    static let foreground = Notification.Name("test.foreground")
    static let protectedData = Notification.Name("test.protectedData")

    static func sources(_ center: NotificationCenter) -> [LifecycleObservation.Source] {
        [
            .init(center: center, name: background, event: .didEnterBackground),
            .init(center: center, name: foreground, event: .willEnterForeground),
            .init(center: center, name: protectedData, event: .protectedDataDidBecomeAvailable),
        ]
    }

    @Test("Notifications become events applied one at a time, in the order they were posted")
    func ordered() async throws {
        let harness = Harness()
        try await harness.client.start()
        let center = NotificationCenter()
        let (counts, continuation) = AsyncStream<Int>.makeStream()
        let appliedCounts = Recorder(counts)
        let applied = Locked<[LifecycleEvent]>([])
        let client = harness.client
        let observation = LifecycleObservation(sources: Self.sources(center), initial: [.launchedInBackground]) {
            event in
            await client.handleLifecycleEvent(event)
            continuation.yield(
                applied.withLock { applied in
                    applied.append(event)
                    return applied.count
                })
        }
        var posted: [LifecycleEvent] = [.launchedInBackground]
        for index in 0..<50 {
            let toBackground = index % 2 == 0
            center.post(name: toBackground ? Self.background : Self.foreground, object: nil)
            posted.append(toBackground ? .didEnterBackground : .willEnterForeground)
        }
        center.post(name: Self.background, object: nil)
        posted.append(.didEnterBackground)
        let total = posted.count
        _ = await appliedCounts.first { $0 == total }
        #expect(applied.withLock { $0 } == posted)
        #expect(await client.isInBackground, "the last event wins")
        #expect(await client.maintenanceTask == nil)
        withExtendedLifetime(observation) {}
        await client.stop()
    }

    @Test("A background launch keeps the heartbeat paused until the app comes to the foreground")
    func backgroundLaunch() async throws {
        let harness = Harness()
        let center = NotificationCenter()
        let (applied, continuation) = AsyncStream<LifecycleEvent>.makeStream()
        let recorder = Recorder(applied)
        let client = harness.client
        let observation = LifecycleObservation(sources: Self.sources(center), initial: [.launchedInBackground]) {
            event in
            await client.handleLifecycleEvent(event)
            continuation.yield(event)
        }
        _ = await recorder.first { $0 == .launchedInBackground }
        try await client.start()
        #expect(await client.isInBackground)
        #expect(await client.maintenanceTask == nil, "no heartbeat in a background launch")
        center.post(name: Self.foreground, object: nil)
        _ = await recorder.first { $0 == .willEnterForeground }
        #expect(await client.maintenanceTask != nil)
        withExtendedLifetime(observation) {}
        await client.stop()
    }

    @Test("Protected data becoming available reads an unavailable store at once, without waiting for a retry")
    func protectedDataRetriesStorage() async throws {
        try await Device.with { device in
            let (_, installation) = try await device.firstRun()

            device.keychain.setFault(.locked)
            let harness = device.launch()
            let center = NotificationCenter()
            let observation = LifecycleObservation(client: harness.client, sources: Self.sources(center))
            await #expect(throws: TesseraError.self) { try await harness.client.start() }
            #expect(harness.client.sessionState == .unavailable(.storageUnavailable))
            device.keychain.setFault(nil)
            let states = Recorder(harness.client.sessionUpdates)
            center.post(name: Self.protectedData, object: nil)
            _ = await states.first { $0.value != nil }  // the clock did not move
            #expect(await harness.client.installationID == installation)
            withExtendedLifetime(observation) {}
            await harness.client.stop()
        }
    }
}
