import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import TesseraTokens
import Testing

@testable import TesseraServer

/// The dispatcher sleeps until the store signals a commit: no timer moves it (its fallback interval
/// is a day here), and an idle one stays parked.
@Suite("Webhook dispatcher wake-up")
struct WebhookWakeTests {
    /// A transport that answers 200 and reports each delivered event ID.
    final class Arrivals: Sendable {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)

        var transport: WebhookDispatcher.Transport {
            { delivery, _, _ in
                self.continuation.yield(delivery.id)
                return WebhookOutcome(kind: .delivered, statusCode: 200, durationMilliseconds: 1)
            }
        }
    }

    /// Counts the dispatcher's parks on the store's signal and reports each.
    final class Parks: Sendable {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        private let count = Atomic(0)

        var total: Int { count.load(ordering: .relaxed) }

        init(_ signal: EventSignal) {
            signal.onPark { [self] _ in
                continuation.yield(count.add(1, ordering: .relaxed).newValue)
            }
        }
    }

    /// The next element of `stream`, or nil when none comes within 30 s: a dispatcher that is never
    /// woken fails the test instead of hanging it (the deadline is a guard, not what the test waits for).
    private func next<Element: Sendable>(_ stream: AsyncStream<Element>) async -> Element? {
        await withTaskGroup(of: Element?.self) { group in
            group.addTask {
                var iterator = stream.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return nil
            }
            let element = await group.next() ?? nil
            group.cancelAll()
            return element
        }
    }

    private func start(_ environment: TestEnvironment, _ arrivals: Arrivals) -> Task<Void, any Error> {
        let clock = environment.clock
        let dispatcher = WebhookDispatcher(
            store: environment.store, transport: arrivals.transport, now: { clock.now },
            interval: .seconds(86_400), logger: Logger(label: "test"))
        return Task { try await dispatcher.run() }
    }

    /// Commits one `identity_secret.created` and returns its event ID.
    private func event(_ environment: TestEnvironment) async throws -> String {
        let (store, projectID, now) = environment.storeProjectNow
        try await store.addIdentitySecret(
            projectID: projectID,
            secret: IdentitySecretRecord(kid: OpaqueToken.identifier(prefix: "k"), value: "v", createdAt: now),
            limit: 3, origin: EventOrigin(actor: .secretKey, clientAddress: nil))
        let feed = try await store.events(EventQuery(projectID: projectID, after: 0, limit: 500))
        return try #require(feed.last { $0.type == "identity_secret.created" }).id
    }

    @Test(
        "A commit that writes an event wakes a parked dispatcher, which delivers it", arguments: StoreBackend.allCases)
    func commitWakes(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        try await environment.storeWebhook()
        let arrivals = Arrivals()
        let parks = Parks(environment.store.eventSignal)
        let running = start(environment, arrivals)
        // The first pass delivers the webhook's own `webhook.created`, the next finds nothing: parked.
        _ = await next(arrivals.stream)
        _ = await next(parks.stream)
        #expect(environment.store.eventSignal.parked == 1)

        let id = try await event(environment)
        #expect(await next(arrivals.stream) == id, "delivered with the fallback interval a day away")
        _ = await next(parks.stream)
        running.cancel()
        _ = try? await running.value
        try await environment.store.close()
    }

    @Test(
        "An idle dispatcher stays parked on the signal: no pass runs until a commit", arguments: StoreBackend.allCases)
    func idleParks(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        let arrivals = Arrivals()
        let parks = Parks(environment.store.eventSignal)
        let running = start(environment, arrivals)
        #expect(await next(parks.stream) == 1)
        // Give a looping dispatcher every chance to run again: it does not.
        for _ in 0..<2_000 { await Task.yield() }
        #expect(parks.total == 1)
        #expect(environment.store.eventSignal.parked == 1, "waiting on the signal, not on a timer")

        // A commit without any webhook: one pass (nothing to send), then parked again.
        _ = try await event(environment)
        #expect(await next(parks.stream) == 2)
        for _ in 0..<2_000 { await Task.yield() }
        #expect(parks.total == 2)
        running.cancel()
        _ = try? await running.value
        try await environment.store.close()
    }

    @Test("A wait returns at once for a raise it has not seen, and parks for one it has", .timeLimit(.minutes(1)))
    func generations() async throws {
        let signal = EventSignal()
        let seen = signal.generation
        signal.raise()
        await signal.wait(after: seen, timeout: .seconds(86_400))  // returns: the raise came after `seen`
        let parks = Parks(signal)
        let current = signal.generation
        let waiting = Task { await signal.wait(after: current, timeout: .seconds(86_400)) }
        _ = await next(parks.stream)
        #expect(signal.parked == 1)
        signal.raise()
        await waiting.value
        #expect(signal.parked == 0)
    }
}
