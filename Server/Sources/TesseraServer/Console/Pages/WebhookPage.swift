/// A webhook (`GET /console/webhook?id=&status=&cursor=&event=`): its facts and state, the actions
/// for admins, its deliveries (filtered by state, paged), an event's every attempt with bodies, and
/// the latest attempts. A signing secret made a moment ago is shown once, from its flash.
struct WebhookPage: ConsolePage {
    var webhook: WebhookRecord
    /// A signing secret made a moment ago, shown once.
    var secret: String?
    /// The endpoint's state from its latest attempts.
    var state: String
    /// The delivery state the list is filtered by (`pending`, `delivered`, `failed`), if any.
    var statusFilter: String?
    /// This page of deliveries, newest first.
    var deliveries: [WebhookDeliveryRecord]
    /// The cursor of the next page, if any.
    var next: String?
    /// The latest attempts, newest first.
    var recent: [WebhookAttemptRecord]
    /// The event whose every attempt is shown, if one was asked for.
    var eventID: String?
    var eventAttempts: [WebhookAttemptRecord]
    var viewer: ConsoleViewer
    var refusal: ConsoleRefusal?

    var title: String { "Webhook \(webhook.url)" }
    var section: ConsoleSection? { .webhooks }

    func render(_ html: inout HTML) {
        let admin = viewer.may(.admin)
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
                ("Description", webhook.description ?? "—"), ("State", state),
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
                ConsoleParts.actionForm(
                    &html, action: "webhook-update", csrf: viewer.csrf,
                    fields: [("webhook_id", webhook.id), ("enabled", webhook.enabled ? "false" : "true")],
                    button: webhook.enabled ? "Disable the endpoint" : "Enable the endpoint", label: nil,
                    danger: webhook.enabled)
                ConsoleParts.actionForm(
                    &html, action: "webhook-test", csrf: viewer.csrf, fields: [("webhook_id", webhook.id)],
                    button: "Send a test event", label: nil)
                html.element("form", [("method", "post"), ("action", "webhook-replay"), ("class", "inline-form")]) {
                    html in
                    html.hidden("csrf", viewer.csrf)
                    html.hidden("webhook_id", webhook.id)
                    ConsoleParts.field(
                        &html, id: "after", label: "Replay every event after sequence", type: "text",
                        extra: [("inputmode", "numeric")], refusal: refusal?.matching("webhook-replay"))
                    html.element("button", [("type", "submit")], text: "Replay")
                }
                let editing = refusal?.matching("webhook-edit", [("webhook_id", webhook.id)])
                html.element("form", [("method", "post"), ("action", "webhook-edit"), ("class", "stack")]) { html in
                    html.hidden("csrf", viewer.csrf)
                    html.hidden("webhook_id", webhook.id)
                    html.element("h3", text: "Edit the endpoint")
                    ConsoleParts.input(
                        &html, id: "edit-url", name: "url", label: "URL", type: "url", value: webhook.url,
                        refusal: editing)
                    ConsoleParts.input(
                        &html, id: "edit-types", name: "types", label: ConsoleController.typeHint, type: "text",
                        value: webhook.types.joined(separator: ", "), required: false, refusal: editing)
                    ConsoleParts.input(
                        &html, id: "edit-description", name: "description", label: "Description", type: "text",
                        value: webhook.description, required: false, refusal: editing)
                    html.element("button", [("type", "submit")], text: "Save the endpoint")
                }
                ConsoleParts.passwordForm(
                    &html, action: "webhook-rotate", csrf: viewer.csrf, fields: [("webhook_id", webhook.id)],
                    button: "Rotate the signing secret", id: "rotate-secret", danger: false,
                    refusal: refusal)
                ConsoleParts.passwordForm(
                    &html, action: "webhook-delete", csrf: viewer.csrf, fields: [("webhook_id", webhook.id)],
                    button: "Delete the endpoint", id: "delete-webhook", danger: true, refusal: refusal)
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
                        [("aria-current", statusFilter == value ? "true" : nil)], text: label)
                    html.text(" ")
                }
            }
            if deliveries.isEmpty {
                html.element("p", text: "No delivery.")
                return
            }
            let headers =
                ["Sequence", "Event", "Type", "Status", "Attempt", "HTTP", "Error", "Took", "At", "Next attempt"]
                + (admin ? ["Action"] : [])
            ConsoleParts.table(&html, caption: nil, headers: headers, rows: deliveries) { html, delivery in
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
                        ConsoleParts.actionForm(
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
                            [("id", webhook.id), ("status", statusFilter), ("cursor", next)]),
                        [("rel", "next")], text: "Older deliveries")
                }
            }
        }
        if let eventID {
            html.element("section", [("aria-labelledby", "message-title"), ("id", "message")]) { html in
                html.element("h2", [("id", "message-title")], text: "Event \(eventID): every attempt")
                Self.attempts(&html, eventAttempts, bodies: true)
            }
        }
        html.element("section", [("aria-labelledby", "attempts-title")]) { html in
            html.element("h2", [("id", "attempts-title")], text: "Latest attempts, newest first")
            Self.attempts(&html, recent, bodies: false)
        }
    }

    /// Attempts as a table; with `bodies`, each attempt's request and the start of its answer follow.
    static func attempts(_ html: inout HTML, _ attempts: [WebhookAttemptRecord], bodies: Bool) {
        guard !attempts.isEmpty else {
            html.element("p", text: "No attempt yet.")
            return
        }
        ConsoleParts.table(&html, caption: nil, headers: ["At", "Event", "Attempt", "Answer", "Took"], rows: attempts) {
            html, attempt in
            html.element("td") { ConsoleFormat.time(attempt.at, in: &$0) }
            html.element("td") { $0.element("code", text: attempt.eventID) }
            html.element("td", text: String(attempt.attempt))
            html.element(
                "td", [("class", attempt.succeeded ? "verdict-pass" : "verdict-fail")],
                text: ConsoleController.outcome(attempt))
            html.element("td", text: "\(attempt.durationMilliseconds) ms")
        }
        guard bodies else { return }
        for attempt in attempts {
            html.element("details") { html in
                html.element(
                    "summary",
                    text:
                        "Attempt \(attempt.attempt) at \(ConsoleFormat.time(attempt.at)): \(ConsoleController.outcome(attempt))"
                )
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
}
