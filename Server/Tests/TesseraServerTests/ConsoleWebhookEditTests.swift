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

    @Test("An event's attempts show each request body and the start of the answer; deliveries show their sequence")
    func attemptBodies() {
        let now = ConsolePagesTests.now
        let webhook = WebhookRecord(
            id: "whk_1", projectID: "prj_1", url: "https://example.com/hook", types: [], description: nil,
            enabled: true, createdAt: now - 600, updatedAt: now - 600, secret: "whsec_x")
        let delivery = WebhookDeliveryRecord(
            webhookID: "whk_1", eventID: "evt_9", eventType: "profile.blocked", sequence: 41, state: .failed,
            attempt: 2, statusCode: 500, error: nil, durationMilliseconds: 12, attemptedAt: now - 60,
            nextAttemptAt: now + 60, queuedAt: now - 120)
        let attempts = [1, 2].map {
            WebhookAttemptRecord(
                id: "wat_\($0)", webhookID: "whk_1", eventID: "evt_9", attempt: $0, at: now - 120 + Int64($0) * 60,
                statusCode: 500, error: nil, durationMilliseconds: 12, requestBody: #"{"type":"profile.blocked"}"#,
                responseBody: Array("<b>down</b> \($0)".utf8))
        }
        func page(event: String?) -> String {
            ConsolePagesTests.text(
                WebhookPage(
                    webhook: webhook, secret: nil, state: "failing", statusFilter: nil, deliveries: [delivery],
                    next: nil,
                    recent: attempts, eventID: event, eventAttempts: event == nil ? [] : attempts,
                    viewer: ConsolePagesTests.viewer(.viewer), refusal: nil))
        }
        let shown = page(event: "evt_9")
        #expect(shown.contains("Event evt_9: every attempt"))
        #expect(shown.components(separatedBy: "<h3>Request body</h3>").count - 1 == 2)
        #expect(shown.components(separatedBy: "<h3>Answer (first 4 KiB)</h3>").count - 1 == 2)
        #expect(shown.contains("<code>{&quot;type&quot;:&quot;profile.blocked&quot;}</code>"), "the request body")
        #expect(shown.contains("&lt;b&gt;down&lt;/b&gt; 2") && !shown.contains("<b>down</b>"), "the answer is escaped")
        #expect(shown.contains("<td>41</td>"), "the delivery's sequence")
        #expect(shown.contains(#"href="webhook?id=whk_1&amp;event=evt_9""#))
        let plain = page(event: nil)
        #expect(!plain.contains("Request body") && !plain.contains("every attempt"))
    }
}
