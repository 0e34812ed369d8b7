import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// A replay or a test event racing the deletion of its webhook, with the gates of
/// ``ProfileRaceTests`` (the webhook's row held on PostgreSQL, the writer on SQLite).
@Suite("Queueing to a webhook decides on its locked row")
struct WebhookRaceTests {
    /// A webhook of the environment's project, stored directly, and an event its feed holds.
    private static func webhookAndEvent(_ environment: TestEnvironment, _ client: APIClient) async throws -> (
        WebhookRecord, eventID: String
    ) {
        let record = try await environment.storeWebhook()
        #expect(try await client.admin(.post, "/v1/admin/identity-secrets").status == .created)
        let events = try await environment.store.events(
            EventQuery(projectID: environment.project.project.id, after: 0, limit: 1000))
        return (record, try #require(events.last?.id))
    }

    @Test(
        "DELETE of a webhook ∥ a replay to it: the replay is not found, never 503 or a replay of nothing",
        arguments: StoreBackend.allCases)
    func deleteThenReplay(backend: StoreBackend) async throws {
        try await TestEnvironment.withApp(backend: backend, store: try backend.makeRaceStore()) { environment, client in
            let (webhook, eventID) = try await Self.webhookAndEvent(environment, client)
            let (deleted, replayed) = try await race(
                environment.store, holding: [.webhook(webhook.id)],
                { try await client.admin(.delete, "/v1/admin/webhooks/\(webhook.id)") },
                then: {
                    try await client.admin(
                        .post, "/v1/admin/webhooks/\(webhook.id)/replay", body: #"{"event_id":"\#(eventID)"}"#)
                })
            #expect(deleted.status == .noContent)
            #expect(replayed.status == .notFound, "\(replayed.status) \(replayed.json)")
        }
    }

    @Test(
        "DELETE of a webhook ∥ a test event to it: the test is not found, never 503",
        arguments: StoreBackend.allCases)
    func deleteThenTest(backend: StoreBackend) async throws {
        try await TestEnvironment.withApp(backend: backend, store: try backend.makeRaceStore()) { environment, client in
            let (webhook, _) = try await Self.webhookAndEvent(environment, client)
            let (deleted, tested) = try await race(
                environment.store, holding: [.webhook(webhook.id)],
                { try await client.admin(.delete, "/v1/admin/webhooks/\(webhook.id)") },
                then: { try await client.admin(.post, "/v1/admin/webhooks/\(webhook.id)/test") })
            #expect(deleted.status == .noContent)
            #expect(tested.status == .notFound, "\(tested.status) \(tested.json)")
        }
    }
}
