/// The settings (`GET /console/settings`): one field per setting, disabled below the admin role;
/// a refused value is shown again beside its field, as typed.
struct SettingsPage: ConsolePage {
    var settings: ProjectSettings
    /// The project's `updated_at` the form was drawn from: saving refuses when it changed since.
    var base: Int64
    /// The field at fault and why, when a save was refused.
    var invalid: (field: String, message: String)?
    /// What was typed, when a save was refused.
    var typed: ConsoleForm?
    var viewer: ConsoleViewer

    var title: String { "Settings" }
    var section: ConsoleSection? { .settings }

    func render(_ html: inout HTML) {
        let admin = viewer.may(.admin)
        html.element("form", [("method", "post"), ("action", "settings"), ("class", "stack")]) { html in
            html.hidden("csrf", viewer.csrf)
            html.hidden("base", String(base))
            for field in Self.fields {
                let value = field.value(settings)
                switch field.kind {
                case .flag:
                    html.element("div") { html in
                        html.void(
                            "input",
                            [
                                ("id", field.name), ("name", field.name), ("type", "checkbox"), ("value", "true"),
                                ("checked", value == "true" ? "" : nil), ("disabled", admin ? nil : ""),
                            ])
                        html.text(" ")
                        html.element("label", [("for", field.name)], text: field.label)
                    }
                case .number, .text:
                    let wrong = invalid?.field == field.name
                    html.element("label", [("for", field.name)], text: field.label)
                    html.void(
                        "input",
                        [
                            ("id", field.name), ("name", field.name), ("type", "text"),
                            ("value", typed?[field.name] ?? value),
                            ("inputmode", field.kind == .number ? "numeric" : nil), ("disabled", admin ? nil : ""),
                            ("aria-invalid", wrong ? "true" : nil),
                            ("aria-describedby", wrong ? field.name + "-error" : nil),
                            ("autofocus", wrong ? "" : nil),
                        ])
                    if wrong, let invalid {
                        html.element(
                            "p", [("id", field.name + "-error"), ("class", "field-error")], text: invalid.message)
                    }
                }
                if let help = Self.help[field.name] { html.element("p", [("class", "small")], text: help) }
            }
            if admin { html.element("button", [("type", "submit")], text: "Review changes") }
        }
    }

    /// One setting as the settings form shows it.
    struct Field: Sendable {
        var name: String
        var label: String
        var value: @Sendable (ProjectSettings) -> String
        var kind: Kind
        enum Kind { case flag, number, text }
    }

    static let fields: [Field] = [
        Field(
            name: "allow_unverified_identify", label: "Accept the client-asserted user_id form (unverified)",
            value: { $0.allowUnverifiedIdentify ? "true" : "false" }, kind: .flag),
        Field(
            name: "require_audience", label: "Identity tokens must name this project in aud",
            value: { $0.requireAudience ? "true" : "false" }, kind: .flag),
        Field(
            name: "expected_issuer", label: "Expected iss (empty: any)", value: { $0.expectedIssuer ?? "" },
            kind: .text),
        Field(
            name: "max_identity_token_lifetime_seconds", label: "Longest identity-token lifetime (seconds, 1–86400)",
            value: { String($0.maxIdentityTokenLifetimeSeconds) }, kind: .number),
        Field(
            name: "leeway_seconds", label: "Clock leeway (seconds, 0–600)", value: { String($0.leewaySeconds) },
            kind: .number),
        Field(
            name: "anonymous_session_minutes", label: "Anonymous session length (minutes, 5–525600)",
            value: { String($0.anonymousSessionMinutes) }, kind: .number),
        Field(
            name: "identified_session_minutes", label: "Identified session length (minutes, 5–525600)",
            value: { String($0.identifiedSessionMinutes) }, kind: .number),
        Field(
            name: "anonymous_starts_per_minute", label: "Anonymous starts per client per minute (empty: unlimited)",
            value: { $0.rateLimits.anonymousStartsPerMinute.map(String.init) ?? "" }, kind: .number),
        Field(
            name: "failed_identifies_per_minute", label: "Failed identifies per client per minute (empty: unlimited)",
            value: { $0.rateLimits.failedIdentifiesPerMinute.map(String.init) ?? "" }, kind: .number),
        Field(
            name: "failed_identifies_per_installation_per_minute",
            label: "Failed identifies per installation per minute (empty: unlimited)",
            value: { $0.rateLimits.failedIdentifiesPerInstallationPerMinute.map(String.init) ?? "" }, kind: .number),
    ]

    /// What each risky setting does, under its field.
    static let help: [String: String] = [
        "allow_unverified_identify":
            "Lets a client sign in as any user_id it names, without a token your backend signed: for development only.",
        "require_audience": "Refuses identity tokens minted for another project.",
        "expected_issuer": "Refuses identity tokens whose iss is not this value.",
        "leeway_seconds": "How far clocks may disagree; more accepts expired tokens for longer.",
        "max_identity_token_lifetime_seconds":
            "Refuses identity tokens that live longer: a stolen one is useful for less time.",
    ]
}
