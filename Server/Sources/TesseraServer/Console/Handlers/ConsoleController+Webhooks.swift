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
            (
                .post, "/console/webhook-create", Requirement(role: .admin, password: true, back: .webhooks),
                createWebhook
            ),
            (.post, "/console/webhook-update", Requirement(role: .admin, back: .webhook), updateWebhook),
            (.post, "/console/webhook-edit", Requirement(role: .admin, back: .webhook), editWebhook),
            (
                .post, "/console/webhook-delete", Requirement(role: .admin, password: true, back: .webhook),
                deleteWebhook
            ),
            (
                .post, "/console/webhook-rotate", Requirement(role: .admin, password: true, back: .webhook),
                rotateWebhookSecret
            ),
            (.post, "/console/webhook-replay", Requirement(role: .admin, back: .webhook), replayWebhook),
            (.post, "/console/webhook-test", Requirement(role: .admin, back: .webhook), testWebhook),
        ]
    }

    /// `GET /console/webhooks`
    func webhooks(_ request: ConsoleRequest) async throws -> Response {
        try await webhooks(request, message: nil, status: .ok)
    }

    /// The event types an endpoint may ask for, listed under the form.
    static let typeHint = "Event types, comma-separated (empty: every type)"

    private func webhooks(_ request: ConsoleRequest, message: ConsoleMessage?, status: HTTPResponse.Status)
        async throws -> Response
    {
        let list = try await core.store.webhooks(projectID: request.runtime.id, afterID: nil, limit: 200)
        var states: [String: String] = [:]
        for webhook in list { states[webhook.id] = try await state(request.runtime, webhook) }
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
                    html.element("td", text: states[webhook.id] ?? Self.state(webhook, attempts: []))
                    html.element("td") { ConsoleFormat.time(webhook.createdAt, in: &$0) }
                }
            }
            guard viewer.may(.admin) else { return }
            html.element("section", [("aria-labelledby", "new-webhook-title")]) { html in
                html.element("h2", [("id", "new-webhook-title")], text: "Add an endpoint")
                html.element("form", [("method", "post"), ("action", "webhook-create"), ("class", "stack")]) { html in
                    html.hidden("csrf", viewer.csrf)
                    let refusal = request.refusal?.matching("webhook-create")
                    Self.field(&html, id: "url", label: "URL (https)", type: "url", refusal: refusal)
                    Self.field(
                        &html, id: "types", label: Self.typeHint, type: "text", required: false, refusal: refusal)
                    html.element(
                        "p", [("class", "small")],
                        text: "Types: " + EventType.allCases.map(\.rawValue).joined(separator: ", ") + ".")
                    Self.field(
                        &html, id: "description", label: "Description", type: "text", required: false,
                        refusal: refusal)
                    Self.field(
                        &html, id: "password", label: "Your password", type: "password",
                        autocomplete: "current-password", refusal: refusal)
                    html.element("button", [("type", "submit")], text: "Add endpoint")
                }
            }
        }
    }

    /// How many of an endpoint's latest attempts its state is read from.
    static let stateAttempts = 3

    /// An endpoint's state from its latest attempts (newest first): disabled; "failing" when every one
    /// of them failed (at once, from the first failed attempt); "retrying" when the latest failed
    /// after a success; "delivering" when the latest succeeded.
    static func state(_ webhook: WebhookRecord, attempts: [WebhookAttemptRecord]) -> String {
        if !webhook.enabled { return "disabled (\(webhook.disabledReason ?? "admin"))" }
        guard let latest = attempts.first else { return "no attempt yet" }
        if latest.succeeded { return "delivering" }
        let outcomes = attempts.map(Self.outcome)
        let summary = Set(outcomes).count == 1 ? outcomes[0] : outcomes.joined(separator: ", ")
        if attempts.allSatisfy({ !$0.succeeded }) {
            return attempts.count == 1
                ? "failing: the last attempt \(summary)" : "failing: last \(attempts.count) attempts \(summary)"
        }
        return "retrying: the last attempt \(outcomes[0])"
    }

    /// "HTTP 500", "timeout".
    static func outcome(_ attempt: WebhookAttemptRecord) -> String {
        attempt.statusCode.map { "HTTP \($0)" } ?? attempt.error ?? "no answer"
    }

    /// The state of an endpoint, read from its latest attempts.
    func state(_ runtime: ProjectRuntime, _ webhook: WebhookRecord) async throws -> String {
        Self.state(
            webhook,
            attempts: try await core.store.webhookAttempts(
                projectID: runtime.id, webhookID: webhook.id, eventID: nil, limit: Self.stateAttempts))
    }

    /// `POST /console/webhook-create`: shows the new endpoint's secret once.
    func createWebhook(_ request: ConsoleRequest) async throws -> Response {
        let (url, types) = try checkedURLAndTypes(request)
        let (webhook, secret) = try await actions.createWebhook(
            request.runtime, url: url, types: types, description: request.form.value("description"),
            origin: request.origin(addresses: addresses))
        return try await redirect(
            request, to: ConsoleURL("webhook", [("id", webhook.id)]),
            flash: [("secret", secret), ("notice", "The endpoint was added.")])
    }

    /// `GET /console/webhook?id=&status=&cursor=`
    func webhook(_ request: ConsoleRequest) async throws -> Response {
        let flash = try await takeFlash(request)
        return try await webhook(
            request, id: request.query.value("id") ?? "", secret: flash.fields?["secret"], message: flash.message)
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
        let recent = try await core.store.webhookAttempts(
            projectID: runtime.id, webhookID: id, eventID: nil, limit: 20)
        let shownState = Self.state(webhook, attempts: Array(recent.prefix(Self.stateAttempts)))
        let eventID = request.query.value("event").flatMap { InputRules.isIdentifier($0, prefix: "evt_") ? $0 : nil }
        var messageAttempts: [WebhookAttemptRecord] = []
        if let eventID {
            messageAttempts = try await core.store.webhookAttempts(
                projectID: runtime.id, webhookID: id, eventID: eventID, limit: 50)
        }
        let viewer = request.viewer
        let admin = viewer.may(.admin)
        let refusal = request.refusal
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
                    ("Description", webhook.description ?? "—"), ("State", shownState),
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
                    // Disabling asks once more (console.js asks before a danger button).
                    Self.actionForm(
                        &html, action: "webhook-update", csrf: viewer.csrf,
                        fields: [("webhook_id", webhook.id), ("enabled", webhook.enabled ? "false" : "true")],
                        button: webhook.enabled ? "Disable the endpoint" : "Enable the endpoint", label: nil,
                        danger: webhook.enabled)
                    Self.actionForm(
                        &html, action: "webhook-test", csrf: viewer.csrf, fields: [("webhook_id", webhook.id)],
                        button: "Send a test event", label: nil)
                    html.element("form", [("method", "post"), ("action", "webhook-replay"), ("class", "inline-form")]) {
                        html in
                        html.hidden("csrf", viewer.csrf)
                        html.hidden("webhook_id", webhook.id)
                        Self.field(
                            &html, id: "after", label: "Replay every event after sequence", type: "text",
                            extra: [("inputmode", "numeric")], refusal: request.refusal?.matching("webhook-replay"))
                        html.element("button", [("type", "submit")], text: "Replay")
                    }
                    let editing = refusal?.matching("webhook-edit", [("webhook_id", webhook.id)])
                    html.element("form", [("method", "post"), ("action", "webhook-edit"), ("class", "stack")]) { html in
                        html.hidden("csrf", viewer.csrf)
                        html.hidden("webhook_id", webhook.id)
                        html.element("h3", text: "Edit the endpoint")
                        Self.input(
                            &html, id: "edit-url", name: "url", label: "URL", type: "url", value: webhook.url,
                            refusal: editing)
                        Self.input(
                            &html, id: "edit-types", name: "types", label: Self.typeHint, type: "text",
                            value: webhook.types.joined(separator: ", "), required: false, refusal: editing)
                        Self.input(
                            &html, id: "edit-description", name: "description", label: "Description", type: "text",
                            value: webhook.description, required: false, refusal: editing)
                        html.element("button", [("type", "submit")], text: "Save the endpoint")
                    }
                    Self.passwordForm(
                        &html, action: "webhook-rotate", csrf: viewer.csrf, fields: [("webhook_id", webhook.id)],
                        button: "Rotate the signing secret", id: "rotate-secret", danger: false,
                        refusal: request.refusal)
                    Self.passwordForm(
                        &html, action: "webhook-delete", csrf: viewer.csrf, fields: [("webhook_id", webhook.id)],
                        button: "Delete the endpoint", id: "delete-webhook", danger: true, refusal: request.refusal)
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
                    ["Sequence", "Event", "Type", "Status", "Attempt", "HTTP", "Error", "Took", "At", "Next attempt"]
                    + (admin ? ["Action"] : [])
                Self.table(&html, caption: nil, headers: headers, rows: shown) { html, delivery in
                    html.element("td", text: delivery.sequence.map(String.init) ?? "test")
                    html.element("td") { html in
                        html.link(
                            ConsoleURL("webhook", [("id", webhook.id), ("event", delivery.eventID)]),
                            [("aria-label", "Attempts of \(delivery.eventID)")], text: delivery.eventID)
                    }
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
            if let eventID {
                html.element("section", [("aria-labelledby", "message-title"), ("id", "message")]) { html in
                    html.element("h2", [("id", "message-title")], text: "Event \(eventID): every attempt")
                    Self.attempts(&html, messageAttempts, bodies: true)
                }
            }
            html.element("section", [("aria-labelledby", "attempts-title")]) { html in
                html.element("h2", [("id", "attempts-title")], text: "Latest attempts, newest first")
                Self.attempts(&html, recent, bodies: false)
            }
        }
    }

    /// Attempts as a table; with `bodies`, each attempt's request and the start of its answer follow.
    static func attempts(_ html: inout HTML, _ attempts: [WebhookAttemptRecord], bodies: Bool) {
        guard !attempts.isEmpty else {
            html.element("p", text: "No attempt yet.")
            return
        }
        table(&html, caption: nil, headers: ["At", "Event", "Attempt", "Answer", "Took"], rows: attempts) {
            html, attempt in
            html.element("td") { ConsoleFormat.time(attempt.at, in: &$0) }
            html.element("td") { $0.element("code", text: attempt.eventID) }
            html.element("td", text: String(attempt.attempt))
            html.element("td", [("class", attempt.succeeded ? "verdict-pass" : "verdict-fail")], text: outcome(attempt))
            html.element("td", text: "\(attempt.durationMilliseconds) ms")
        }
        guard bodies else { return }
        for attempt in attempts {
            html.element("details") { html in
                html.element(
                    "summary",
                    text: "Attempt \(attempt.attempt) at \(ConsoleFormat.time(attempt.at)): \(outcome(attempt))")
                html.element("h3", text: "Request body")
                html.element("pre") { $0.element("code", text: attempt.requestBody ?? "(not kept)") }
                html.element("h3", text: "Answer (first 4 KiB)")
                html.element("pre") { html in
                    html.element(
                        "code",
                        text: attempt.responseBody.map { String(decoding: $0, as: UTF8.self) } ?? "(no answer)")
                }
            }
        }
    }

    /// `POST /console/webhook-edit`: the URL, the event types and the description.
    func editWebhook(_ request: ConsoleRequest) async throws -> Response {
        let id = request.form["webhook_id"] ?? ""
        let (url, types) = try checkedURLAndTypes(request)
        var patch = WebhookPatch()
        patch.url = url
        patch.types = types
        patch.description = .some(request.form.value("description"))
        _ = try await actions.updateWebhook(
            request.runtime, id: id, patch: patch, origin: request.origin(addresses: addresses))
        return ConsoleHTTP.redirect(ConsoleURL("webhook", [("id", id), ("notice", "webhook-updated")]))
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
        return try await redirect(
            request, to: ConsoleURL("webhook", [("id", id)]),
            flash: [
                ("secret", secret), ("notice", "The secret was rotated; the old one signs beside it for 24 hours."),
            ])
    }

    /// `POST /console/webhook-replay`: one event (`event_id`) or every event after a sequence (`after`).
    func replayWebhook(_ request: ConsoleRequest) async throws -> Response {
        let id = request.form["webhook_id"] ?? ""
        let queued: Int
        if let eventID = request.form.value("event_id") {
            queued = try await actions.replayWebhookEvent(request.runtime, webhookID: id, eventID: eventID)
        } else if let after = request.form.value("after") {
            guard after.utf8.count <= 19, let sequence = Int64(after) else {
                throw ConsoleFailure.invalid(
                    "after", "Give a sequence number (the Sequence column of the deliveries below).")
            }
            queued = try await actions.replayWebhookEvents(request.runtime, webhookID: id, afterSequence: sequence)
        } else {
            throw ConsoleFailure.invalid("after", "Give a sequence to replay after.")
        }
        return try await redirect(
            request, to: ConsoleURL("webhook", [("id", id)]),
            flash: [("notice", queued == 1 ? "1 event was queued again." : "\(queued) events were queued again.")])
    }

    /// `POST /console/webhook-test`
    func testWebhook(_ request: ConsoleRequest) async throws -> Response {
        let id = request.form["webhook_id"] ?? ""
        _ = try await actions.sendTestEvent(
            request.runtime, webhookID: id, actor: EventActor(kind: .operator, id: request.viewer.operatorID))
        return ConsoleHTTP.redirect(ConsoleURL("webhook", [("id", id), ("notice", "test-sent")]))
    }

    /// The form's `url` and `types`, each rule checked on its own first, so that a refusal is shown
    /// beside its field (creating and editing an endpoint).
    private func checkedURLAndTypes(_ request: ConsoleRequest) throws -> (url: String, types: [String]) {
        let url = request.form.value("url") ?? ""
        let types = (request.form.value("types") ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
        do {
            _ = try WebhookRules.url(url, allowInsecure: core.configuration.allowInsecureWebhooks)
        } catch let error as CoreError {
            throw ConsoleFailure.invalid("url", error.message, code: error.code.rawValue)
        }
        do {
            _ = try WebhookRules.types(types)
        } catch let error as CoreError {
            throw ConsoleFailure.invalid("types", error.message, code: error.code.rawValue)
        }
        return (url, types)
    }
}
