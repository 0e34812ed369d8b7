/// The webhooks (`GET /console/webhooks`): every endpoint with its state, and for admins the form
/// that adds one.
struct WebhooksPage: ConsolePage {
    var webhooks: [WebhookRecord]
    /// Each endpoint's state from its latest attempts, by ID.
    var states: [String: String]
    var viewer: ConsoleViewer
    var refusal: ConsoleRefusal?

    var title: String { "Webhooks" }
    var section: ConsoleSection? { .webhooks }

    func render(_ html: inout HTML) {
        if webhooks.isEmpty {
            html.element("p", text: "No webhook yet.")
        } else {
            ConsoleParts.table(
                &html, caption: "Endpoints", headers: ["Endpoint", "Events", "State", "Created"], rows: webhooks
            ) {
                html, webhook in
                html.element("td") { $0.link(ConsoleURL("webhook", [("id", webhook.id)]), text: webhook.url) }
                html.element(
                    "td", text: webhook.types.isEmpty ? "every type" : webhook.types.joined(separator: ", "))
                html.element("td", text: states[webhook.id] ?? ConsoleController.state(webhook, attempts: []))
                html.element("td") { ConsoleFormat.time(webhook.createdAt, in: &$0) }
            }
        }
        guard viewer.may(.admin) else { return }
        html.element("section", [("aria-labelledby", "new-webhook-title")]) { html in
            html.element("h2", [("id", "new-webhook-title")], text: "Add an endpoint")
            html.element("form", [("method", "post"), ("action", "webhook-create"), ("class", "stack")]) { html in
                html.hidden("csrf", viewer.csrf)
                let refusal = refusal?.matching("webhook-create")
                ConsoleParts.field(&html, id: "url", label: "URL (https)", type: "url", refusal: refusal)
                ConsoleParts.field(
                    &html, id: "types", label: ConsoleController.typeHint, type: "text", required: false,
                    refusal: refusal)
                html.element(
                    "p", [("class", "small")],
                    text: "Types: " + EventType.allCases.map(\.rawValue).joined(separator: ", ") + ".")
                ConsoleParts.field(
                    &html, id: "description", label: "Description", type: "text", required: false,
                    refusal: refusal)
                ConsoleParts.field(
                    &html, id: "password", label: "Your password", type: "password",
                    autocomplete: "current-password", refusal: refusal)
                html.element("button", [("type", "submit")], text: "Add endpoint")
            }
        }
    }
}
