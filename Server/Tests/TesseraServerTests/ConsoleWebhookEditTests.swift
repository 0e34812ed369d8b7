import Foundation
import Testing

@testable import TesseraServer

/// The console's webhook page edits an endpoint (D10): the URL, the event types and the
/// description; a refused URL comes back on the form, beside its field, and changes nothing.
@Suite("Console: editing a webhook")
struct ConsoleWebhookEditTests {
    @Test("webhook-edit changes the URL, types and description; a bad URL is refused on its field")
    func edit() async throws {
        let environment = try await TestEnvironment.make(backend: .sqlite) { $0.allowInsecureWebhooks = true }
        try await environment.withApp { api in
            let (admin, _) = try await signedInBrowser(environment, api, role: .admin)
            try await admin.get("/console/webhooks")
            let created = try await admin.post(
                "/console/webhook-create",
                [("url", "http://127.0.0.1:9/hook"), ("types", "session.ended"), ("password", "correct horse battery")])
            #expect(created.status == .seeOther)
            let projectID = environment.project.project.id
            let webhook = try #require(
                try await environment.store.webhooks(projectID: projectID, afterID: nil, limit: 10).first)

            try await admin.get("/console/webhook?id=\(webhook.id)")
            let edited = try await admin.post(
                "/console/webhook-edit",
                [
                    ("webhook_id", webhook.id), ("url", "http://127.0.0.1:10/other"),
                    ("types", "profile.blocked, session.ended"), ("description", "Billing"),
                ])
            #expect(edited.location == "webhook?id=\(webhook.id)&notice=webhook-updated")
            let stored = try #require(try await environment.store.webhook(projectID: projectID, id: webhook.id))
            #expect(stored.url == "http://127.0.0.1:10/other")
            #expect(stored.types == ["profile.blocked", "session.ended"])
            #expect(stored.description == "Billing")
            let page = try await admin.get("/console/\(try #require(edited.location))")
            #expect(
                page.html.contains(#"value="http://127.0.0.1:10/other""#) && page.html.contains(#"value="Billing""#))

            let refused = try await admin.post(
                "/console/webhook-edit",
                [("webhook_id", webhook.id), ("url", "ftp://example.com/hook"), ("types", ""), ("description", "")])
            #expect(refused.status.code >= 400 && refused.status.code < 500)
            #expect(refused.html.contains("edit-url-error"))
            let unchanged = try #require(try await environment.store.webhook(projectID: projectID, id: webhook.id))
            #expect(unchanged.url == "http://127.0.0.1:10/other" && unchanged.description == "Billing")
        }
    }
}
