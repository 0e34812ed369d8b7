import Foundation
import Logging
import Synchronization
import TesseraTokens
import Testing

@testable import TesseraServer

/// Webhook delivery on every backend: the fan-out from the feed, leases, the retry schedule,
/// disabling, replay and test events, with an injected clock and transport (no network, no sleeps).
@Suite("Webhook delivery")
struct WebhookDeliveryTests {
    /// A transport that records each delivery and answers what the test scripted.
    final class Receiver: Sendable {
        struct Sent: Sendable {
            var delivery: WebhookSender.Delivery
            var url: String
            var secrets: [WebhookSecret]
        }

        private let state = Mutex<(sent: [Sent], answer: WebhookOutcome)>(
            ([], WebhookOutcome(kind: .delivered, statusCode: 200, durationMilliseconds: 3)))

        var sent: [Sent] { state.withLock { $0.sent } }

        func answer(_ outcome: WebhookOutcome) { state.withLock { $0.answer = outcome } }

        func clear() { state.withLock { $0.sent = [] } }

        var transport: WebhookDispatcher.Transport {
            { delivery, url, secrets in
                self.state.withLock {
                    $0.sent.append(Sent(delivery: delivery, url: url, secrets: secrets))
                    return $0.answer
                }
            }
        }
    }

    static let admin = EventOrigin(actor: .secretKey, clientAddress: "192.0.2.1")
    static let failed = WebhookOutcome(kind: .failed, statusCode: 500, durationMilliseconds: 7)

    private func dispatcher(_ environment: TestEnvironment, _ receiver: Receiver, node: String = "node_a")
        -> WebhookDispatcher
    {
        let clock = environment.clock
        return WebhookDispatcher(
            store: environment.store, transport: receiver.transport, policy: WebhookRetryPolicy(jitter: { _ in 0 }),
            now: { clock.now }, node: node, logger: Logger(label: "test"))
    }

    /// An environment on `backend` whose project has one webhook for `types` (every type when empty).
    private func withWebhook(_ backend: StoreBackend, types: [String] = []) async throws -> (
        TestEnvironment, WebhookRecord
    ) {
        let environment = try await TestEnvironment.make(backend: backend)
        return (environment, try await environment.storeWebhook(types: types))
    }

    /// A receiver (answering `answer` when given) and a dispatcher delivering to it.
    private func receiving(_ environment: TestEnvironment, answer: WebhookOutcome? = nil) -> (
        Receiver, WebhookDispatcher
    ) {
        let receiver = Receiver()
        if let answer { receiver.answer(answer) }
        return (receiver, dispatcher(environment, receiver))
    }

    /// Writes `identity_secret.created` then `identity_secret.deleted`.
    private func twoEvents(_ environment: TestEnvironment) async throws {
        let (store, projectID, now) = environment.storeProjectNow
        let kid = OpaqueToken.identifier(prefix: "k")
        try await store.addIdentitySecret(
            projectID: projectID, secret: IdentitySecretRecord(kid: kid, value: "v", createdAt: now), limit: 3,
            origin: Self.admin)
        #expect(try await store.deleteIdentitySecret(projectID: projectID, kid: kid, now: now, origin: Self.admin))
    }

    private func log(_ environment: TestEnvironment, _ webhook: WebhookRecord) async throws -> [WebhookDeliveryRecord] {
        try await environment.store.webhookDeliveries(
            projectID: environment.project.project.id, webhookID: webhook.id, state: nil, before: nil, limit: 200)
    }

    private func feed(_ environment: TestEnvironment) async throws -> [EventRecord] {
        try await environment.store.events(EventQuery(projectID: environment.project.project.id, after: 0, limit: 200))
    }

    @Test(
        "Each enabled endpoint gets the events of its types committed after it, signed, as the feed shows them",
        arguments: StoreBackend.allCases)
    func fanOut(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        try await twoEvents(environment)  // before any webhook: never delivered
        let every = try await environment.storeWebhook()
        let deleted = try await environment.storeWebhook(types: ["identity_secret.deleted"])
        let other = try await environment.makeOtherProject()
        try await twoEvents(environment)
        let (receiver, dispatcher) = receiving(environment)
        #expect(await dispatcher.runOnce() == 5)

        // From its creation on (its own webhook.created included): `deleted`'s creation and the two events.
        let all = try await feed(environment)
        let start = try #require(all.first { $0.type == "webhook.created" && $0.data.contains(every.id) })
        let events = all.filter { $0.sequence >= start.sequence }
        #expect(
            events.map(\.type) == [
                "webhook.created", "webhook.created", "identity_secret.created", "identity_secret.deleted",
            ])
        let sent = receiver.sent
        let byEndpoint = Dictionary(grouping: sent, by: \.secrets.first)
        let toEvery = try #require(byEndpoint[try WebhookSecret(every.secret)]).map(\.delivery.id).sorted()
        #expect(toEvery == events.map(\.id).sorted())
        let toDeleted = try #require(byEndpoint[try WebhookSecret(deleted.secret)]).map(\.delivery.id)
        #expect(toDeleted == [events.last?.id], "the types filter")
        for delivery in sent {
            let event = try #require(events.first { $0.id == delivery.delivery.id })
            var writer = JSONWriter()
            writer.event(event)
            #expect(delivery.delivery.body == writer.bytes, "the body is the event as the feed shows it")
            #expect(delivery.delivery.timestamp == environment.clock.seconds)
            let headers = Dictionary(
                uniqueKeysWithValues: WebhookSender.headers(for: delivery.delivery, secrets: delivery.secrets))
            _ = try WebhookVerifier(secrets: delivery.secrets).verify(
                body: delivery.delivery.body, headers: headers, now: environment.clock.now)
        }
        let logged = try await log(environment, every)
        #expect(logged.count == 4 && logged.allSatisfy { $0.state == .delivered && $0.attempt == 1 })
        #expect(logged.allSatisfy { $0.statusCode == 200 && $0.durationMilliseconds == 3 && $0.nextAttemptAt == nil })
        #expect(Set(logged.map(\.sequence)) == Set(events.map(\.sequence)))

        receiver.clear()
        #expect(await dispatcher.runOnce() == 0, "nothing is delivered twice")
        #expect(
            try await environment.store.webhookDeliveries(
                projectID: other.project.id, webhookID: every.id, state: nil, before: nil, limit: 10
            ).isEmpty, "another project sees no log")
    }

    @Test(
        "A failing delivery is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, then failed",
        arguments: StoreBackend.allCases)
    func retrySchedule(backend: StoreBackend) async throws {
        let (environment, endpoint) = try await withWebhook(backend, types: ["identity_secret.created"])
        try await twoEvents(environment)
        let (receiver, dispatcher) = receiving(environment, answer: Self.failed)
        let start = environment.clock.seconds
        #expect(await dispatcher.runOnce() == 1)
        var expected = start
        for (index, delay) in WebhookRetryPolicy.delays.enumerated() {
            expected += delay
            let row = try #require(try await log(environment, endpoint).first)
            #expect(row.state == .pending && row.attempt == index + 1 && row.statusCode == 500)
            #expect(row.nextAttemptAt == expected, "attempt \(index + 2) is due \(delay) s later")
            environment.clock.advance(seconds: Double(delay - 1))
            #expect(await dispatcher.runOnce() == 0, "not before it is due")
            environment.clock.advance(seconds: 1)
            #expect(await dispatcher.runOnce() == 1)
        }
        let last = try #require(try await log(environment, endpoint).first)
        #expect(last.state == .failed && last.attempt == 8 && last.nextAttemptAt == nil)
        #expect(Set(receiver.sent.map(\.delivery.id)).count == 1, "the same webhook-id on every attempt")
        environment.clock.advance(seconds: 86_400)
        #expect(await dispatcher.runOnce() == 0)
        let stillEnabled = try #require(
            try await environment.store.webhook(projectID: environment.project.project.id, id: endpoint.id))
        #expect(stillEnabled.enabled, "failing for less than 5 days")

        // Every attempt failed since the first, 5 days ago: the next failure disables the endpoint.
        environment.clock.advance(seconds: Double(start + 5 * 86_400 - environment.clock.seconds))
        let eventID = try #require(receiver.sent.first?.delivery.id)
        #expect(
            try await environment.store.replayWebhookEvent(
                projectID: environment.project.project.id, webhookID: endpoint.id, eventID: eventID,
                now: environment.clock.seconds) == true)
        #expect(await dispatcher.runOnce() == 1)
        let disabled = try #require(
            try await environment.store.webhook(projectID: environment.project.project.id, id: endpoint.id))
        #expect(!disabled.enabled && disabled.disabledReason == "failing")
        #expect(disabled.disabledAt == environment.clock.seconds)
        // Its pending delivery waits, out of the claims' way, until the endpoint is enabled again.
        let parked = try #require(try await log(environment, endpoint).first)
        #expect(parked.state == .pending && parked.attempt == 1 && parked.nextAttemptAt == nil)
        environment.clock.advance(seconds: 60)
        #expect(await dispatcher.runOnce() == 0)
        _ = try await environment.store.updateWebhook(
            projectID: environment.project.project.id, id: endpoint.id, patch: WebhookPatch(enabled: true),
            now: environment.clock.seconds)
        receiver.answer(WebhookOutcome(kind: .delivered, statusCode: 200, durationMilliseconds: 1))
        #expect(await dispatcher.runOnce() == 1)
        #expect(try await log(environment, endpoint).first?.state == .delivered)
    }

    @Test("A success in between restarts the 5 days", arguments: StoreBackend.allCases)
    func successResetsFailing(backend: StoreBackend) async throws {
        let (environment, endpoint) = try await withWebhook(
            backend, types: ["identity_secret.created", "identity_secret.deleted"])
        let (receiver, dispatcher) = receiving(environment, answer: Self.failed)
        try await twoEvents(environment)
        #expect(await dispatcher.runOnce() == 2)
        environment.clock.advance(seconds: 4 * 86_400)
        receiver.answer(WebhookOutcome(kind: .delivered, statusCode: 204, durationMilliseconds: 1))
        #expect(await dispatcher.runOnce() == 2)
        receiver.answer(Self.failed)
        environment.clock.advance(seconds: 2 * 86_400)
        try await twoEvents(environment)
        #expect(await dispatcher.runOnce() == 2)
        let webhook = try #require(
            try await environment.store.webhook(projectID: environment.project.project.id, id: endpoint.id))
        #expect(webhook.enabled, "failing since the last failures only")
    }

    @Test(
        "410 fails the delivery and disables the endpoint; enabling it again resumes with new events",
        arguments: StoreBackend.allCases)
    func goneDisables(backend: StoreBackend) async throws {
        let (environment, endpoint) = try await withWebhook(backend, types: ["identity_secret.created"])
        try await twoEvents(environment)
        let (receiver, dispatcher) = receiving(
            environment, answer: WebhookOutcome(kind: .gone, statusCode: 410, durationMilliseconds: 2))
        #expect(await dispatcher.runOnce() == 1)
        let row = try #require(try await log(environment, endpoint).first)
        #expect(row.state == .failed && row.statusCode == 410 && row.nextAttemptAt == nil)
        let disabled = try #require(try await environment.store.webhook(projectID: endpoint.projectID, id: endpoint.id))
        #expect(!disabled.enabled && disabled.disabledReason == "gone")

        try await twoEvents(environment)  // while disabled: not queued
        receiver.answer(WebhookOutcome(kind: .delivered, statusCode: 200, durationMilliseconds: 1))
        #expect(await dispatcher.runOnce() == 0)
        _ = try await environment.store.updateWebhook(
            projectID: endpoint.projectID, id: endpoint.id, patch: WebhookPatch(enabled: true),
            now: environment.clock.seconds)
        #expect(await dispatcher.runOnce() == 0, "the events of the disabled time are not queued")
        try await twoEvents(environment)
        #expect(await dispatcher.runOnce() == 1)
        #expect(try await log(environment, endpoint).count == 2)
    }

    @Test(
        "A lease keeps a delivery to one claimer until it expires; a stale lease records nothing",
        arguments: StoreBackend.allCases)
    func leases(backend: StoreBackend) async throws {
        let (environment, endpoint) = try await withWebhook(backend)
        let store = environment.store
        for _ in 0..<5 { try await twoEvents(environment) }
        let now = environment.clock.seconds
        _ = try await store.fanOutWebhookDeliveries(now: now, batchSize: 500)
        // Two nodes claim at once: each delivery goes to one of them.
        async let first = store.claimWebhookDeliveries(lease: "a", now: now, leaseSeconds: 60, limit: 6)
        async let second = store.claimWebhookDeliveries(lease: "b", now: now, leaseSeconds: 60, limit: 6)
        let (a, b) = try await (first, second)
        #expect(a.count + b.count == 11, "its own webhook.created and ten events")
        #expect(Set(a.map(\.eventID)).isDisjoint(with: b.map(\.eventID)))
        #expect(try await store.claimWebhookDeliveries(lease: "c", now: now + 59, leaseSeconds: 60, limit: 20).isEmpty)

        // Node a dies; its leases expire and node c takes its deliveries over.
        let taken = try await store.claimWebhookDeliveries(lease: "c", now: now + 60, leaseSeconds: 60, limit: 20)
        #expect(Set(taken.map(\.eventID)) == Set((a + b).map(\.eventID)))
        let policy = WebhookRetryPolicy(jitter: { _ in 0 })
        let delivered = WebhookOutcome(kind: .delivered, statusCode: 200, durationMilliseconds: 1)
        let stale = try #require(a.first)
        #expect(
            try await !store.recordWebhookAttempt(policy.result(of: delivered, attempt: 1, delivery: stale, now: now)),
            "the lease was taken over")
        let current = try #require(taken.first { $0.eventID == stale.eventID })
        #expect(
            try await store.recordWebhookAttempt(policy.result(of: delivered, attempt: 1, delivery: current, now: now)))
        let row = try #require(try await log(environment, endpoint).first { $0.eventID == stale.eventID })
        #expect(row.state == .delivered && row.attempt == 1)
        #expect(
            try await !store.recordWebhookAttempt(
                policy.result(of: delivered, attempt: 1, delivery: current, now: now)),
            "recorded once")
    }

    @Test("Two nodes delivering at once send each event to an endpoint once", arguments: StoreBackend.allCases)
    func twoNodes(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        _ = try await environment.storeWebhook(types: ["identity_secret.created", "identity_secret.deleted"])
        _ = try await environment.storeWebhook(types: ["identity_secret.deleted"])
        for _ in 0..<40 { try await twoEvents(environment) }
        let receiver = Receiver()
        var first = dispatcher(environment, receiver, node: "node_a")
        var second = dispatcher(environment, receiver, node: "node_b")
        first.claimSize = 7
        second.claimSize = 7
        async let a = first.runOnce()
        async let b = second.runOnce()
        let (sentByA, sentByB) = await (a, b)
        // 80 events to the first endpoint, 40 to the second, in claims of 7 (at most 10 claims a pass).
        #expect(sentByA + sentByB == receiver.sent.count)
        let pairs = receiver.sent.map { "\($0.secrets.first?.hashValue ?? 0)|\($0.delivery.id)" }
        #expect(Set(pairs).count == pairs.count, "no event went to one endpoint twice")
        _ = await first.runOnce()
        _ = await second.runOnce()
        #expect(receiver.sent.count == 120)
        #expect(Set(receiver.sent.map(\.delivery.id)).count == 80)
    }

    @Test(
        "An erasure removes the bodies of the attempts that carried the profile's events, and keeps the rest",
        arguments: StoreBackend.allCases)
    func erasureScrubsAttempts(backend: StoreBackend) async throws {
        let (environment, endpoint) = try await withWebhook(
            backend, types: ["profile.created", "identity_secret.created"])
        let (store, projectID, _) = environment.storeProjectNow
        try await twoEvents(environment)
        let now = environment.clock.seconds
        let identified = try await store.identify(
            IdentifyCommand(
                projectID: projectID, callerSessionID: nil, externalID: "erase-me", verified: true, name: nil,
                avatarURL: nil, email: nil, tokenID: nil, newProfileID: OpaqueToken.identifier(prefix: "usr_"),
                newSession: SessionRecord(
                    id: OpaqueToken.identifier(prefix: "ses_"), projectID: projectID, profileID: "",
                    installationID: nil, kind: .verified, createdAt: now, lastAuthenticatedAt: now,
                    expiresAt: now + 3600),
                sessionTokenHash: OpaqueToken.sha256(OpaqueToken.sessionToken()), now: now))
        let receiver = Receiver()
        var failed = Self.failed
        failed.responseBody = Array("echo: erase-me".utf8)
        receiver.answer(failed)
        #expect(await dispatcher(environment, receiver).runOnce() == 2)
        let before = try await store.webhookAttempts(
            projectID: projectID, webhookID: endpoint.id, eventID: nil, limit: 10)
        #expect(before.count == 2 && before.allSatisfy { $0.requestBody != nil && $0.responseBody != nil })
        #expect(
            try await store.eraseProfile(
                projectID: projectID, profileID: identified.context.profile.id, now: now, origin: .system))
        let after = try await store.webhookAttempts(
            projectID: projectID, webhookID: endpoint.id, eventID: nil, limit: 10)
        let created = try #require(
            try await feed(environment).first {
                $0.type == "profile.created" && $0.profileID == identified.context.profile.id
            })
        #expect(after.count == 2, "the attempts stay, with their status and timing")
        for attempt in after {
            let erased = attempt.eventID == created.id
            #expect((attempt.requestBody == nil) == erased && (attempt.responseBody == nil) == erased)
            #expect(attempt.statusCode == 500)
        }
    }

    @Test(
        "Every attempt is kept (request, status, the first 4 KiB of the answer, latency); a replay adds attempts",
        arguments: StoreBackend.allCases)
    func attemptLog(backend: StoreBackend) async throws {
        let (environment, endpoint) = try await withWebhook(backend, types: ["identity_secret.created"])
        let (store, projectID, _) = environment.storeProjectNow
        try await twoEvents(environment)
        let receiver = Receiver()
        var failed = Self.failed
        failed.responseBody = Array("upstream exploded".utf8)
        receiver.answer(failed)
        let dispatcher = dispatcher(environment, receiver)
        #expect(await dispatcher.runOnce() == 1)
        let first = try await store.webhookAttempts(
            projectID: projectID, webhookID: endpoint.id, eventID: nil, limit: 10)
        #expect(first.count == 1)
        let attempt = try #require(first.first)
        #expect(attempt.attempt == 1 && attempt.statusCode == 500 && attempt.durationMilliseconds == 7)
        #expect(attempt.responseBody == Array("upstream exploded".utf8))
        #expect(attempt.requestBody.map { Array($0.utf8) } == receiver.sent.first?.delivery.body)
        let webhookRecord = try #require(try await store.webhook(projectID: projectID, id: endpoint.id))
        #expect(
            ConsoleController.state(webhookRecord, attempts: first) == "failing: the last attempt HTTP 500",
            "failing from the first failed attempt, not after minutes")

        // The retry succeeds; then a replay of the same event adds two more attempts, replacing none.
        receiver.answer(WebhookOutcome(kind: .delivered, statusCode: 204, durationMilliseconds: 2))
        environment.clock.advance(seconds: 10)
        #expect(await dispatcher.runOnce() == 1)
        #expect(
            try await store.replayWebhookEvent(
                projectID: projectID, webhookID: endpoint.id, eventID: attempt.eventID, now: environment.clock.seconds)
                == true)
        receiver.answer(failed)
        #expect(await dispatcher.runOnce() == 1)
        let all = try await store.webhookAttempts(
            projectID: projectID, webhookID: endpoint.id, eventID: attempt.eventID, limit: 10)
        #expect(all.map(\.attempt) == [1, 2, 1], "newest first; the replay's attempt numbered from 1 again")
        #expect(all.map(\.statusCode) == [500, 204, 500])
        #expect(ConsoleController.state(webhookRecord, attempts: all) == "retrying: the last attempt HTTP 500")
        #expect(ConsoleController.state(webhookRecord, attempts: Array(all.dropFirst())) == "delivering")
        let other = try await environment.makeOtherProject()
        #expect(
            try await store.webhookAttempts(
                projectID: other.project.id, webhookID: endpoint.id, eventID: nil, limit: 10
            )
            .isEmpty, "another project's webhook shows nothing")
        // The attempt log ages out with the deliveries.
        _ = try await store.deleteFinishedWebhookDeliveries(
            attemptedBefore: environment.clock.seconds + 1, batchSize: 100)
        #expect(
            try await store.webhookAttempts(projectID: projectID, webhookID: endpoint.id, eventID: nil, limit: 10)
                .isEmpty)
    }

    @Test("Replay of one event, of everything after a sequence, and a test event", arguments: StoreBackend.allCases)
    func replay(backend: StoreBackend) async throws {
        let (environment, endpoint) = try await withWebhook(backend, types: ["identity_secret.created"])
        let (store, projectID, _) = environment.storeProjectNow
        for _ in 0..<3 { try await twoEvents(environment) }
        let (receiver, dispatcher) = receiving(environment)
        #expect(await dispatcher.runOnce() == 3)
        let events = try await feed(environment)
        let created = events.filter { $0.type == "identity_secret.created" }

        receiver.clear()
        environment.clock.advance(seconds: 10)
        #expect(
            try await store.replayWebhookEvent(
                projectID: projectID, webhookID: endpoint.id, eventID: created[1].id, now: environment.clock.seconds)
                == true)
        #expect(await dispatcher.runOnce() == 1)
        #expect(receiver.sent.map(\.delivery.id) == [created[1].id])
        #expect(
            try await store.replayWebhookEvent(
                projectID: projectID, webhookID: endpoint.id, eventID: "evt_unknown", now: environment.clock.seconds)
                == false, "the feed does not hold it")
        let other = try await environment.makeOtherProject()
        #expect(
            try await store.replayWebhookEvent(
                projectID: other.project.id, webhookID: endpoint.id, eventID: created[1].id,
                now: environment.clock.seconds) == nil, "another project's webhook is unknown")

        receiver.clear()
        let replayed = try await store.replayWebhookEvents(
            projectID: projectID, webhookID: endpoint.id, afterSequence: created[0].sequence,
            now: environment.clock.seconds)
        #expect(replayed == 2, "only the endpoint's types")
        #expect(await dispatcher.runOnce() == 2)
        #expect(Set(receiver.sent.map(\.delivery.id)) == Set(created.dropFirst().map(\.id)))
        #expect(
            try await store.replayWebhookEvents(
                projectID: projectID, webhookID: "whk_unknown", afterSequence: 0, now: environment.clock.seconds)
                == nil)

        receiver.clear()
        environment.clock.advance(seconds: 1)
        let test = EventRecord(
            id: OpaqueToken.identifier(prefix: "evt_"), projectID: projectID, sequence: 0, type: "webhook.test",
            createdAt: environment.clock.seconds, actor: .secretKey, clientAddress: nil, profileID: nil,
            data: "{\"webhook_id\":\"\(endpoint.id)\"}")
        var writer = JSONWriter()
        writer.event(test)
        let body = String(decoding: writer.bytes, as: UTF8.self)
        #expect(
            try await store.queueWebhookTest(
                projectID: projectID, webhookID: endpoint.id, event: test, body: body, now: environment.clock.seconds))
        #expect(await dispatcher.runOnce() == 1)
        #expect(receiver.sent.map(\.delivery.id) == [test.id])
        #expect(receiver.sent.first?.delivery.body == writer.bytes)
        let newest = try #require(try await log(environment, endpoint).first)
        #expect(newest.eventID == test.id && newest.eventType == "webhook.test" && newest.sequence == nil)
        #expect(newest.state == .delivered)
    }

    @Test(
        "Within 24 h of a rotation a delivery is signed with the new and the previous secret",
        arguments: StoreBackend.allCases)
    func rotation(backend: StoreBackend) async throws {
        let (environment, endpoint) = try await withWebhook(backend, types: ["identity_secret.created"])
        let newSecret = WebhookSecret.generate().text
        _ = try await environment.store.rotateWebhookSecret(
            projectID: endpoint.projectID, id: endpoint.id, newSecret: newSecret,
            previousExpiresAt: environment.clock.seconds + 86_400, now: environment.clock.seconds)
        try await twoEvents(environment)
        let (receiver, dispatcher) = receiving(environment)
        #expect(await dispatcher.runOnce() == 1)
        #expect(receiver.sent.first?.secrets == [try WebhookSecret(newSecret), try WebhookSecret(endpoint.secret)])
        environment.clock.advance(seconds: 86_400)
        try await twoEvents(environment)
        #expect(await dispatcher.runOnce() == 1)
        #expect(receiver.sent.last?.secrets == [try WebhookSecret(newSecret)])
    }

    @Test("The log pages newest first and filters by status", arguments: StoreBackend.allCases)
    func logPages(backend: StoreBackend) async throws {
        let (environment, endpoint) = try await withWebhook(
            backend, types: ["identity_secret.created", "identity_secret.deleted"])
        let (store, projectID, _) = environment.storeProjectNow
        let (receiver, dispatcher) = receiving(environment)
        for _ in 0..<3 {
            try await twoEvents(environment)
            #expect(await dispatcher.runOnce() == 2)
            environment.clock.advance(seconds: 1)
        }
        receiver.answer(Self.failed)
        try await twoEvents(environment)
        #expect(await dispatcher.runOnce() == 2)
        var seen: [WebhookDeliveryRecord] = []
        var cursor: WebhookDeliveryCursor?
        repeat {
            let page = try await store.webhookDeliveries(
                projectID: projectID, webhookID: endpoint.id, state: nil, before: cursor, limit: 3)
            seen += page
            cursor =
                page.count == 3
                ? page.last.map { WebhookDeliveryCursor(queuedAt: $0.queuedAt, eventID: $0.eventID) } : nil
        } while cursor != nil
        #expect(seen.count == 8 && Set(seen.map(\.eventID)).count == 8)
        #expect(seen.map(\.queuedAt) == seen.map(\.queuedAt).sorted(by: >))
        let pending = try await store.webhookDeliveries(
            projectID: projectID, webhookID: endpoint.id, state: .pending, before: nil, limit: 50)
        #expect(pending.count == 2 && pending.allSatisfy { $0.state == .pending && $0.nextAttemptAt != nil })
        let oldest = try await store.oldestPendingWebhookDeliveries()
        #expect(oldest.first { $0.webhookID == endpoint.id }?.eventCreatedAt == environment.clock.seconds)
    }

    @Test(
        "Webhook changes write their events, with the actor, never a secret or the URL",
        arguments: StoreBackend.allCases)
    func crudEvents(backend: StoreBackend) async throws {
        let (environment, store, projectID, now) = try await TestEnvironment.makeUnpacked(backend: backend)
        let secret = WebhookSecret.generate().text
        let record = WebhookRecord(
            id: OpaqueToken.identifier(prefix: "whk_"), projectID: projectID,
            url: "https://receiver.example/h?token=t0p",
            types: ["profile.merged"], description: "CRM", enabled: true, createdAt: now, updatedAt: now,
            secret: secret)
        try await store.createWebhook(record, origin: Self.admin)
        _ = try await store.updateWebhook(
            projectID: projectID, id: record.id, patch: WebhookPatch(types: [], enabled: false), now: now,
            origin: Self.admin)
        _ = try await store.updateWebhook(
            projectID: projectID, id: record.id, patch: WebhookPatch(description: .some("CRM")), now: now,
            origin: Self.admin)
        let newSecret = WebhookSecret.generate().text
        _ = try await store.rotateWebhookSecret(
            projectID: projectID, id: record.id, newSecret: newSecret, previousExpiresAt: now + 10, now: now,
            origin: Self.admin)
        #expect(try await store.deleteWebhook(projectID: projectID, id: record.id, now: now, origin: Self.admin))
        #expect(try await !store.deleteWebhook(projectID: projectID, id: record.id, now: now, origin: Self.admin))
        let events = try await feed(environment).filter { $0.type.hasPrefix("webhook.") }
        #expect(events.map(\.type) == ["webhook.created", "webhook.updated", "webhook.updated", "webhook.deleted"])
        let data = events.map { StoreEventTests.Reader.flatten($0.data) }
        #expect(data[0] == ["webhook_id": record.id, "types": "profile.merged", "enabled": "1"])
        #expect(data[1] == ["webhook_id": record.id, "changed": "types,enabled"], "an unchanged patch writes none")
        #expect(data[2] == ["webhook_id": record.id, "changed": "secret"])
        #expect(data[3] == ["webhook_id": record.id])
        #expect(events.allSatisfy { $0.actor == .secretKey && $0.clientAddress == "192.0.2.1" })
        for event in events {
            #expect(!event.data.contains("whsec_") && !event.data.contains("t0p"))
        }

        // The dispatcher disabling an endpoint is a change too.
        let endpoint = try await environment.storeWebhook(types: ["identity_secret.created", "identity_secret.deleted"])
        try await twoEvents(environment)
        let receiver = Receiver()
        receiver.answer(WebhookOutcome(kind: .gone, statusCode: 410, durationMilliseconds: 1))
        #expect(await dispatcher(environment, receiver).runOnce() == 2, "sent at once, one disables")
        let last = try #require(try await feed(environment).last)
        #expect(last.type == "webhook.updated" && last.actor == EventOrigin.webhooks.actor)
        #expect(StoreEventTests.Reader.flatten(last.data) == ["webhook_id": endpoint.id, "changed": "enabled"])
    }
}
