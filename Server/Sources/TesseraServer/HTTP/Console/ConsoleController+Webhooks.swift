import HTTPTypes
import Hummingbird

/// The webhook pages: the endpoints, one endpoint with its deliveries, and their actions.
///
/// A webhook's signing secret is shown once, when the endpoint is made or its secret rotated, and
/// only to an admin who entered their password with the form.
extension ConsoleController {
    func webhookPages() -> [(HTTPRequest.Method, String, Requirement, Handler)] {
        [
            (.get, "/console/webhooks", Requirement(), webhooks),
            (.get, "/console/webhook", Requirement(), webhook),
            (.post, "/console/webhook-create", Requirement(role: .admin, password: true), createWebhook),
            (.post, "/console/webhook-update", Requirement(role: .admin), updateWebhook),
            (.post, "/console/webhook-delete", Requirement(role: .admin, password: true), deleteWebhook),
            (.post, "/console/webhook-rotate", Requirement(role: .admin, password: true), rotateWebhookSecret),
            (.post, "/console/webhook-replay", Requirement(role: .admin), replayWebhook),
            (.post, "/console/webhook-test", Requirement(role: .admin), testWebhook),
        ]
    }

    /// `GET /console/webhooks`
    func webhooks(_ request: ConsoleRequest) async throws -> Response {
        try await webhooks(request, message: nil, status: .ok)
    }

    private func webhooks(_ request: ConsoleRequest, message: ConsoleMessage?, status: HTTPResponse.Status)
        async throws -> Response
    {
        let list = try await core.store.webhooks(projectID: request.runtime.id, afterID: nil, limit: 200)
        let viewer = request.viewer
        return page(request, title: "Webhooks", section: .webhooks, message: message, status: status) { html in
            if list.isEmpty {
                html.element("p", text: "No webhook yet.")
            } else {
                Self.table(
                    &html, caption: "Endpoints", headers: ["Endpoint", "Events", "State", "Created"], rows: list
                ) {
                    html, webhook in
                    html.element("td") { $0.link(ConsoleURL("webhook", [("id", webhook.id)]), text: webhook.url) }
                    html.element(
                        "td", text: webhook.types.isEmpty ? "every type" : webhook.types.joined(separator: ", "))
                    html.element("td", text: Self.state(webhook))
                    html.element("td") { ConsoleFormat.time(webhook.createdAt, in: &$0) }
                }
            }
            guard viewer.may(.admin) else { return }
            html.element("section", [("aria-labelledby", "new-webhook-title")]) { html in
                html.element("h2", [("id", "new-webhook-title")], text: "Add an endpoint")
                html.element("form", [("method", "post"), ("action", "webhook-create"), ("class", "stack")]) { html in
                    html.hidden("csrf", viewer.csrf)
                    Self.field(&html, id: "url", label: "URL (https)", type: "url")
                    Self.field(
                        &html, id: "types", label: "Event types, comma-separated (empty: every type)", type: "text",
                        required: false)
                    Self.field(&html, id: "description", label: "Description", type: "text", required: false)
                    Self.field(
                        &html, id: "password", label: "Your password", type: "password",
                        autocomplete: "current-password")
                    html.element("button", [("type", "submit")], text: "Add endpoint")
                }
            }
        }
    }

    static func state(_ webhook: WebhookRecord) -> String {
        if !webhook.enabled { return "disabled (\(webhook.disabledReason ?? "admin"))" }
        return "delivering"
    }

    /// `POST /console/webhook-create`: shows the new endpoint's secret once.
    func createWebhook(_ request: ConsoleRequest) async throws -> Response {
        let types = (request.form.value("types") ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
        let (webhook, secret) = try await actions.createWebhook(
            request.runtime, url: request.form.value("url") ?? "", types: types,
            description: request.form.value("description"), origin: request.origin(addresses: addresses))
        return try await self.webhook(
            request, id: webhook.id, secret: secret, message: .notice("The endpoint was added."))
    }

    /// `GET /console/webhook?id=&status=&cursor=`
    func webhook(_ request: ConsoleRequest) async throws -> Response {
        try await webhook(request, id: request.query.value("id") ?? "", secret: nil, message: nil)
    }

    private func webhook(_ request: ConsoleRequest, id: String, secret: String?, message: ConsoleMessage?)
        async throws -> Response
    {
        let runtime = request.runtime
        guard InputRules.isIdentifier(id, prefix: "whk_"),
            let webhook = try await core.store.webhook(projectID: runtime.id, id: id)
        else { throw CoreError.notFound }
        var state: WebhookDeliveryRecord.State?
        if let text = request.query.value("status") {
            guard let value = WebhookDeliveryRecord.State(rawValue: text) else {
                throw CoreError.invalidRequest("status must be pending, delivered or failed.")
            }
            state = value
        }
        let cursor = try request.query.value("cursor").map(WebhooksController.deliveryCursor)
        let deliveries = try await core.store.webhookDeliveries(
            projectID: runtime.id, webhookID: id, state: state, before: cursor, limit: 51)
        let shown = Array(deliveries.prefix(50))
        let next = deliveries.count > 50 ? shown.last.map { "\($0.queuedAt).\($0.eventID)" } : nil
        let viewer = request.viewer
        let admin = viewer.may(.admin)
        return page(request, title: "Webhook \(webhook.url)", section: .webhooks, message: message) { html in
            if let secret {
                html.element("div", [("class", "secret"), ("role", "region"), ("aria-label", "Signing secret")]) {
                    html in
                    html.element("p") { html in
                        html.element("strong", text: "Signing secret")
                        html.text(" — shown once: put it in your receiver's configuration now.")
                    }
                    html.element("p") { $0.element("code", [("id", "webhook-secret")], text: secret) }
                }
            }
            html.element("dl", [("class", "facts")]) { html in
                for (name, value) in [
                    ("ID", webhook.id), ("URL", webhook.url),
                    ("Events", webhook.types.isEmpty ? "every type" : webhook.types.joined(separator: ", ")),
                    ("Description", webhook.description ?? "—"), ("State", Self.state(webhook)),
                    ("Created", ConsoleFormat.time(webhook.createdAt)),
                    ("Previous secret signs until", ConsoleFormat.time(webhook.previousSecretExpiresAt)),
                ] {
                    html.element("div") { html in
                        html.element("dt", text: name)
                        html.element("dd", text: value)
                    }
                }
            }
            if admin {
                html.element("section", [("aria-labelledby", "webhook-actions-title"), ("class", "actions")]) { html in
                    html.element("h2", [("id", "webhook-actions-title")], text: "Actions")
                    Self.actionForm(
                        &html, action: "webhook-update", csrf: viewer.csrf,
                        fields: [("webhook_id", webhook.id), ("enabled", webhook.enabled ? "false" : "true")],
                        button: webhook.enabled ? "Disable" : "Enable", label: nil)
                    Self.actionForm(
                        &html, action: "webhook-test", csrf: viewer.csrf, fields: [("webhook_id", webhook.id)],
                        button: "Send a test event", label: nil)
                    html.element("form", [("method", "post"), ("action", "webhook-replay"), ("class", "inline-form")]) {
                        html in
                        html.hidden("csrf", viewer.csrf)
                        html.hidden("webhook_id", webhook.id)
                        Self.field(
                            &html, id: "after", label: "Replay every event after sequence", type: "text",
                            extra: [("inputmode", "numeric")])
                        html.element("button", [("type", "submit")], text: "Replay")
                    }
                    Self.passwordForm(
                        &html, action: "webhook-rotate", csrf: viewer.csrf, fields: [("webhook_id", webhook.id)],
                        button: "Rotate the signing secret", id: "rotate-secret", danger: false)
                    Self.passwordForm(
                        &html, action: "webhook-delete", csrf: viewer.csrf, fields: [("webhook_id", webhook.id)],
                        button: "Delete the endpoint", id: "delete-webhook", danger: true)
                }
            }
            html.element("section", [("aria-labelledby", "deliveries-title")]) { html in
                html.element("h2", [("id", "deliveries-title")], text: "Deliveries, newest first")
                html.element("p") { html in
                    html.text("Show: ")
                    for (value, label) in [
                        (nil, "all"), ("pending", "pending"), ("delivered", "delivered"), ("failed", "failed"),
                    ] {
                        html.link(
                            ConsoleURL("webhook", [("id", webhook.id), ("status", value)]),
                            [("aria-current", request.query.value("status") == value ? "true" : nil)], text: label)
                        html.text(" ")
                    }
                }
                if shown.isEmpty {
                    html.element("p", text: "No delivery.")
                    return
                }
                let headers =
                    ["Event", "Type", "Status", "Attempt", "HTTP", "Error", "Took", "At", "Next attempt"]
                    + (admin ? ["Action"] : [])
                Self.table(&html, caption: nil, headers: headers, rows: shown) { html, delivery in
                    html.element("td") { $0.element("code", text: delivery.eventID) }
                    html.element("td", text: delivery.eventType)
                    html.element("td", text: delivery.state.rawValue)
                    html.element("td", text: String(delivery.attempt))
                    html.element("td", text: delivery.statusCode.map(String.init) ?? "—")
                    html.element("td", text: delivery.error ?? "—")
                    html.element("td", text: delivery.durationMilliseconds.map { "\($0) ms" } ?? "—")
                    html.element("td") { ConsoleFormat.time(delivery.attemptedAt, in: &$0) }
                    html.element("td") { ConsoleFormat.time(delivery.nextAttemptAt, in: &$0) }
                    if admin {
                        html.element("td") { html in
                            Self.actionForm(
                                &html, action: "webhook-replay", csrf: viewer.csrf,
                                fields: [("webhook_id", webhook.id), ("event_id", delivery.eventID)],
                                button: "Replay", label: "Replay event \(delivery.eventID)")
                        }
                    }
                }
                if let next {
                    html.element("p", [("class", "pager")]) { html in
                        html.link(
                            ConsoleURL(
                                "webhook",
                                [("id", webhook.id), ("status", request.query.value("status")), ("cursor", next)]),
                            [("rel", "next")], text: "Older deliveries")
                    }
                }
            }
        }
    }

    /// `POST /console/webhook-update`: enables or disables the endpoint.
    func updateWebhook(_ request: ConsoleRequest) async throws -> Response {
        let id = request.form["webhook_id"] ?? ""
        var patch = WebhookPatch()
        switch request.form["enabled"] {
        case "true": patch.enabled = true
        case "false": patch.enabled = false
        default: throw CoreError.invalidRequest("enabled must be true or false.")
        }
        _ = try await actions.updateWebhook(
            request.runtime, id: id, patch: patch, origin: request.origin(addresses: addresses))
        return ConsoleHTTP.redirect(ConsoleURL("webhook", [("id", id), ("notice", "webhook-updated")]))
    }

    /// `POST /console/webhook-delete`
    func deleteWebhook(_ request: ConsoleRequest) async throws -> Response {
        try await actions.deleteWebhook(
            request.runtime, id: request.form["webhook_id"] ?? "", origin: request.origin(addresses: addresses))
        return ConsoleHTTP.redirect(ConsoleURL("webhooks", [("notice", "webhook-deleted")]))
    }

    /// `POST /console/webhook-rotate`: shows the new secret once.
    func rotateWebhookSecret(_ request: ConsoleRequest) async throws -> Response {
        let id = request.form["webhook_id"] ?? ""
        let secret = try await actions.rotateWebhookSecret(
            request.runtime, id: id, origin: request.origin(addresses: addresses))
        return try await webhook(
            request, id: id, secret: secret,
            message: .notice("The secret was rotated; the old one signs beside it for 24 hours."))
    }

    /// `POST /console/webhook-replay`: one event (`event_id`) or every event after a sequence (`after`).
    func replayWebhook(_ request: ConsoleRequest) async throws -> Response {
        let id = request.form["webhook_id"] ?? ""
        let queued: Int
        if let eventID = request.form.value("event_id") {
            queued = try await actions.replayWebhookEvent(request.runtime, webhookID: id, eventID: eventID)
        } else if let after = request.form.value("after") {
            guard after.utf8.count <= 19, let sequence = Int64(after) else {
                throw CoreError.invalidRequest("after must be a sequence number.")
            }
            queued = try await actions.replayWebhookEvents(request.runtime, webhookID: id, afterSequence: sequence)
        } else {
            throw CoreError.invalidRequest("Give an event or a sequence to replay after.")
        }
        _ = queued
        return ConsoleHTTP.redirect(ConsoleURL("webhook", [("id", id), ("notice", "replayed")]))
    }

    /// `POST /console/webhook-test`
    func testWebhook(_ request: ConsoleRequest) async throws -> Response {
        let id = request.form["webhook_id"] ?? ""
        _ = try await actions.sendTestEvent(
            request.runtime, webhookID: id, actor: EventActor(kind: .operator, id: request.viewer.operatorID))
        return ConsoleHTTP.redirect(ConsoleURL("webhook", [("id", id), ("notice", "test-sent")]))
    }
}
