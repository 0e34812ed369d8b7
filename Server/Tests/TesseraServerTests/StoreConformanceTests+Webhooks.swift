import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

extension StoreConformanceTests {
    private func webhook(_ projectID: String, id: String = OpaqueToken.identifier(prefix: "whk_"), now: Int64 = 10)
        -> WebhookRecord
    {
        WebhookRecord(
            id: id, projectID: projectID, url: "https://example.com/hook", types: ["profile.merged", "session.ended"],
            description: "d", enabled: true, createdAt: now, updatedAt: now, secret: WebhookSecret.generate().text)
    }

    @Test("Webhooks: create, read, page, patch, rotate, delete, per project", arguments: StoreBackend.allCases)
    func webhooks(backend: StoreBackend) async throws {
        let (environment, store, projectID, _) = try await TestEnvironment.makeUnpacked(backend: backend)
        let other = try await environment.makeOtherProject().project.id

        let created = webhook(projectID)
        try await store.createWebhook(created)
        #expect(try await store.webhook(projectID: projectID, id: created.id) == created)
        #expect(try await store.webhook(projectID: other, id: created.id) == nil, "another project's is unknown")

        var all = [created]
        for _ in 0..<4 {
            let next = webhook(projectID)
            try await store.createWebhook(next)
            all.append(next)
        }
        try await store.createWebhook(webhook(other))
        let ids = all.map(\.id).sorted()
        let first = try await store.webhooks(projectID: projectID, afterID: nil, limit: 2)
        #expect(first.map(\.id) == Array(ids.prefix(2)))
        let rest = try await store.webhooks(projectID: projectID, afterID: first.last?.id, limit: 10)
        #expect(rest.map(\.id) == Array(ids.dropFirst(2)))

        let disabled = try #require(
            try await store.updateWebhook(
                projectID: projectID, id: created.id,
                patch: WebhookPatch(url: "https://example.org/x", types: [], enabled: false, description: .some(nil)),
                now: 20))
        #expect(disabled.url == "https://example.org/x" && disabled.types == [] && disabled.description == nil)
        #expect(!disabled.enabled && disabled.disabledAt == 20 && disabled.disabledReason == "admin")
        #expect(disabled.updatedAt == 20 && disabled.secret == created.secret)
        let kept = try #require(
            try await store.updateWebhook(projectID: projectID, id: created.id, patch: WebhookPatch(), now: 25))
        #expect(kept.url == "https://example.org/x" && kept.disabledAt == 20, "absent members are kept")
        let enabled = try #require(
            try await store.updateWebhook(
                projectID: projectID, id: created.id, patch: WebhookPatch(enabled: true), now: 30))
        #expect(enabled.enabled && enabled.disabledAt == nil && enabled.disabledReason == nil)
        #expect(
            try await store.updateWebhook(
                projectID: other, id: created.id, patch: WebhookPatch(enabled: false), now: 30)
                == nil)

        let newSecret = WebhookSecret.generate().text
        let rotated = try #require(
            try await store.rotateWebhookSecret(
                projectID: projectID, id: created.id, newSecret: newSecret, previousExpiresAt: 40 + 86_400, now: 40))
        #expect(rotated.secret == newSecret && rotated.previousSecret == created.secret)
        #expect(rotated.signingSecrets(now: 41) == [newSecret, created.secret])
        #expect(rotated.signingSecrets(now: 40 + 86_400) == [newSecret], "the old secret stops after 24 hours")
        #expect(try await store.webhook(projectID: projectID, id: created.id) == rotated)
        #expect(
            try await store.rotateWebhookSecret(
                projectID: other, id: created.id, newSecret: newSecret, previousExpiresAt: 1, now: 40) == nil)

        let cells = try await store.sealedCells().filter { $0.rowID == created.id }
        #expect(Set(cells.map(\.kind)) == [.webhookSecret, .webhookPreviousSecret])
        #expect(cells.allSatisfy { MasterKeyring.isSealed($0.stored) })

        #expect(try await !store.deleteWebhook(projectID: other, id: created.id))
        #expect(try await store.deleteWebhook(projectID: projectID, id: created.id))
        #expect(try await !store.deleteWebhook(projectID: projectID, id: created.id))
        #expect(try await store.webhook(projectID: projectID, id: created.id) == nil)
    }
}
