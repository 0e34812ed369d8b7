/// The overview (`GET /console/`): counts, active users with their charts, identify outcomes per
/// day, App Attest, webhooks that need attention, identity secrets older than 90 days.
struct OverviewPage: ConsolePage {
    /// The project's counts and when they were counted; nil while the first count runs.
    var counts: (value: ProjectCounts, at: Int64)?
    /// Active users and when they were summed; nil while the first sum runs.
    var activity: (value: ActivitySummary, at: Int64)?
    var attestMode: AppAttestSettings.Mode
    var attestCounts: AppAttestCounts?
    /// Webhooks failing, disabled or behind.
    var troubled: [WebhookRecord]
    /// Each enabled webhook's state from its latest attempts, by ID.
    var states: [String: String]
    /// The oldest undelivered event's time of each webhook holding one, by ID.
    var behind: [String: Int64]
    var webhookCount: Int
    var oldSecrets: [IdentitySecretRecord]
    var secretCount: Int

    var title: String { "Overview" }
    var section: ConsoleSection? { .overview }

    func render(_ html: inout HTML) {
        html.element("section", [("aria-labelledby", "counts-title")]) { html in
            html.element("h2", [("id", "counts-title")], text: "Profiles and sessions")
            guard let counts else {
                html.element("p", [("role", "status")], text: "Counting… reload the page in a moment.")
                return
            }
            html.element("dl", [("class", "stats")]) { html in
                for (name, value) in [
                    ("Profiles", counts.value.profiles), ("Identified", counts.value.identifiedProfiles),
                    ("Anonymous", counts.value.anonymousProfiles), ("Blocked", counts.value.blockedProfiles),
                    ("Live sessions", counts.value.liveSessions),
                ] {
                    html.element("div") { html in
                        html.element("dt", text: name)
                        html.element("dd", text: value.formatted())
                    }
                }
            }
            html.element("p", [("class", "small")]) { html in
                html.text("Counted at ")
                ConsoleFormat.time(counts.at, in: &html)
                html.text("; recounted in the background once a minute.")
            }
        }
        Self.activity(activity, in: &html)
        Self.identify(activity?.value, in: &html)
        Self.appAttest(mode: attestMode, counts: attestCounts, summary: activity?.value, in: &html)
        html.element("section", [("aria-labelledby", "webhooks-title")]) { html in
            html.element("h2", [("id", "webhooks-title")], text: "Webhooks that need attention")
            if troubled.isEmpty {
                html.element(
                    "p", text: "No webhook is failing, disabled or behind (\(webhookCount) in all).")
            } else {
                ConsoleParts.table(&html, caption: nil, headers: ["Webhook", "State", "Since"], rows: troubled) {
                    html, webhook in
                    html.element("td") { $0.link(ConsoleURL("webhook", [("id", webhook.id)]), text: webhook.url) }
                    html.element(
                        "td",
                        text: !webhook.enabled
                            ? "disabled (\(webhook.disabledReason ?? "admin"))"
                            : states[webhook.id].flatMap { $0.hasPrefix("delivering") ? nil : $0 }
                                ?? "behind: undelivered events")
                    html.element("td") {
                        ConsoleFormat.time(webhook.enabled ? behind[webhook.id] : webhook.disabledAt, in: &$0)
                    }
                }
            }
        }
        html.element("section", [("aria-labelledby", "secrets-title")]) { html in
            html.element("h2", [("id", "secrets-title")], text: "Identity secrets older than 90 days")
            if oldSecrets.isEmpty {
                html.element("p", text: "None: \(secretCount) identity secret(s), all younger than 90 days.")
            } else {
                ConsoleParts.table(&html, caption: nil, headers: ["Key ID", "Created", "Last used"], rows: oldSecrets) {
                    html, secret in
                    html.element("td") { $0.element("code", text: secret.kid) }
                    html.element("td") { ConsoleFormat.time(secret.createdAt, in: &$0) }
                    html.element("td") { ConsoleFormat.time(secret.lastUsedAt, in: &$0) }
                }
                html.element("p") { $0.link(ConsoleURL("keys"), text: "Rotate them on the keys page") }
            }
        }
    }
}
