import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// Webhook secrets at rest: sealed under the master key like identity secrets, and moved to a new
/// master key by `tessera keys rewrap`.
@Suite("Webhook secrets at rest")
struct WebhookSecretsTests {
    @Test("A copy of the database holds neither the secret nor the rotated-out one, in any encoding")
    func nothingInTheClear() async throws {
        let environment = try await TestEnvironment.make()
        let store = environment.store
        try await environment.withApp { client in
            let created = try await client.admin(.post, "/v1/admin/webhooks", body: #"{"url":"https://example.com/h"}"#)
            #expect(created.status == .created)
            let first = try #require(created.json["secret"] as? String)
            let id = try #require(created["webhook"]["id"] as? String)
            let rotated = try await client.admin(.post, "/v1/admin/webhooks/\(id)/rotate-secret")
            let second = try #require(rotated.json["secret"] as? String)
            var needles = SecretNeedles()
            needles.add(webhookSecret: first, label: "webhook secret")
            needles.add(webhookSecret: second, label: "rotated webhook secret")
            #expect(needles.found(in: Array(first.utf8)).count >= 2)
            let record = try #require(try await store.webhook(projectID: environment.project.project.id, id: id))
            #expect(record.secret == second && record.previousSecret == first)
            #expect(needles.found(in: try await DatabaseDump.everything(store)) == [])
        }
    }

    @Test("keys rewrap re-seals webhook secrets (current and previous); the old master key can then go")
    func rewrap() async throws {
        let database = try SharedDatabase.make()
        let (old, new) = (MasterKey.generate(), MasterKey.generate())
        let seeding = try database.store(MasterKeyring(current: old))
        try await seeding.migrate()
        let project = try await ProjectProvisioner.create(name: "Hooks", store: seeding, now: Date())
        let projectID = project.project.id
        let original = WebhookRecord(
            id: OpaqueToken.identifier(prefix: "whk_"), projectID: projectID, url: "https://example.com/h", types: [],
            description: nil, enabled: true, createdAt: 1, updatedAt: 1, secret: WebhookSecret.generate().text)
        try await seeding.createWebhook(original)
        let rotated = try #require(
            try await seeding.rotateWebhookSecret(
                projectID: projectID, id: original.id, newSecret: WebhookSecret.generate().text,
                previousExpiresAt: 100, now: 2))
        try await seeding.close()

        let rewrapper = try database.store(MasterKeyring(current: new, previous: [old]))
        let report = try await SecretResealer.rewrap(store: rewrapper)
        #expect(report.rewrapped >= 4, "identity secret, signing key and two webhook secrets")
        let cells = try await rewrapper.sealedCells().filter { $0.rowID == original.id }
        #expect(cells.count == 2 && cells.allSatisfy { MasterKeyring.keyID(of: $0.stored) == new.id })
        try await rewrapper.close()

        let newOnly = try database.store(MasterKeyring(current: new))
        #expect(try await newOnly.webhook(projectID: projectID, id: original.id) == rotated)
        _ = try await SecretResealer.sealPlaintextAndVerify(store: newOnly)
        try await newOnly.close()
    }
}
