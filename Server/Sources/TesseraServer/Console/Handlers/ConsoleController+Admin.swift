import HTTPTypes
import Hummingbird
import TesseraTokens

/// The admin pages: keys, settings (with a diff before saving) and the audit log.
///
/// A project's secret API key and its identity secrets never reach a browser: the console lists
/// them (key ID, age, last use) and deletes them, but new ones are made with the admin API or the
/// command line, which print them where the operator's backend is configured. The publishable key
/// is public and is shown once when rotated; a signing key's private part never leaves the server.
extension ConsoleController {
    /// Their routes, added to ``routes()`` behind the signed-in wrapper.
    func morePages() -> [(HTTPRequest.Method, String, Requirement, Handler)] {
        [
            (.get, "/console/keys", Requirement(), keys),
            (.post, "/console/rotate-api-key", Requirement(role: .admin, password: true, back: .keys), rotateAPIKey),
            (
                .post, "/console/rotate-signing-key", Requirement(role: .admin, password: true, back: .keys),
                rotateSigningKey
            ),
            (
                .post, "/console/delete-identity-secret", Requirement(role: .admin, password: true, back: .keys),
                deleteIdentitySecret
            ),
            (.get, "/console/settings", Requirement(), settings),
            (.post, "/console/settings", Requirement(role: .admin), saveSettings),
            (.get, "/console/audit", Requirement(), audit),
            (.get, "/console/audit.csv", Requirement(), auditCSV),
        ] + webhookPages() + operatorPages() + inspectorPages()
    }

    // MARK: Keys

    /// `GET /console/keys`: identity secrets, API keys (the publishable key in full, the last
    /// characters of the secret key), signing keys; a key rotated a moment ago is shown once, from its
    /// flash.
    func keys(_ request: ConsoleRequest) async throws -> Response {
        let runtime = request.runtime
        let now = core.currentTime().seconds
        let secrets = try await core.store.identitySecrets(projectID: runtime.id)
        let signing = try await core.store.sessionKeys(projectID: runtime.id).sorted {
            ($0.retiredAt ?? .max, $0.createdAt) > ($1.retiredAt ?? .max, $1.createdAt)
        }
        let apiKeys = try await core.store.apiKeyHashes(projectID: runtime.id, now: now)
        let hints = try await core.store.apiKeyHints(projectID: runtime.id)
        let flash = try await takeFlash(request)
        let viewer = request.viewer
        let admin = viewer.may(.admin)
        let refusal = request.refusal
        return page(request, title: "Keys", section: .keys, message: flash.message) { html in
            if let fields = flash.fields, let name = fields["title"], let value = fields["value"] {
                html.element("div", [("class", "secret"), ("role", "region"), ("aria-label", "New key")]) { html in
                    html.element("p") { html in
                        html.element("strong", text: name)
                        html.text(" — shown once: copy it now. Reloading this page will not show it again.")
                    }
                    html.element("p") { $0.element("code", [("id", "revealed-key")], text: value) }
                }
            }
            html.element("section", [("aria-labelledby", "identity-title")]) { html in
                html.element(
                    "h2", [("id", "identity-title")], text: "Identity secrets (HS256, your backend signs with them)")
                let headers = ["Key ID", "Created", "Last used"] + (admin ? ["Action"] : [])
                Self.table(&html, caption: nil, headers: headers, rows: secrets) { html, secret in
                    html.element("td") { $0.element("code", text: secret.kid) }
                    html.element("td") { ConsoleFormat.time(secret.createdAt, in: &$0) }
                    html.element("td") { ConsoleFormat.time(secret.lastUsedAt, in: &$0) }
                    if admin {
                        html.element("td") { html in
                            Self.passwordForm(
                                &html, action: "delete-identity-secret", csrf: viewer.csrf,
                                fields: [("kid", secret.kid)], button: "Delete", id: "delete-\(secret.kid)",
                                danger: true, refusal: refusal)
                        }
                    }
                }
                html.element(
                    "p", [("class", "small")],
                    text:
                        "A new identity secret is made with the admin API (POST /v1/admin/identity-secrets with the secret key), so that it goes straight to your backend and never through a browser. Add the new one, deploy it, then delete the old one here."
                )
            }
            html.element("section", [("aria-labelledby", "api-title")]) { html in
                html.element("h2", [("id", "api-title")], text: "API keys")
                Self.table(&html, caption: nil, headers: ["Kind", "Key", "State"], rows: apiKeys) { html, key in
                    html.element("td", text: key.kind.rawValue)
                    html.element("td") { html in
                        if let hint = hints[key.hash] {
                            html.element("code", [("class", "id")], text: hint)
                        } else {
                            html.text("(made before this version: not recorded)")
                        }
                    }
                    html.element("td") { html in
                        if let expiresAt = key.expiresAt {
                            html.text("rotated out; accepted until ")
                            ConsoleFormat.time(expiresAt, in: &html)
                        } else {
                            html.text("current")
                        }
                    }
                }
                if admin {
                    let rotating = refusal?.matching("rotate-api-key", [("kind", "publishable")])
                    html.element("form", [("method", "post"), ("action", "rotate-api-key"), ("class", "inline-form")]) {
                        html in
                        html.hidden("csrf", viewer.csrf)
                        html.hidden("kind", "publishable")
                        Self.select(
                            &html, id: "grace_seconds", label: "The old publishable key keeps working for",
                            selected: rotating?.form["grace_seconds"] ?? "86400",
                            options: [
                                ("0", "no time (stop now)"), ("3600", "1 hour"), ("86400", "24 hours"),
                                ("604800", "7 days"),
                            ])
                        Self.input(
                            &html, id: "rotate-api-password", name: "password", label: "Your password",
                            type: "password", autocomplete: "current-password", refusal: rotating)
                        html.element("button", [("type", "submit")], text: "Rotate the publishable key")
                    }
                }
                if viewer.may(.owner) {
                    let rotating = refusal?.matching("rotate-api-key", [("kind", "secret")])
                    html.element("h3", text: "Rotate the secret key (owners)")
                    html.element(
                        "p", [("class", "small")],
                        text:
                            "For a lost or leaked secret key. The new key is shown once, on the next page; the old one stops working after the time you choose. Or, on the server's machine: tessera projects rotate-key --project \(request.runtime.project.slug) --kind secret"
                    )
                    html.element("form", [("method", "post"), ("action", "rotate-api-key"), ("class", "inline-form")]) {
                        html in
                        html.hidden("csrf", viewer.csrf)
                        html.hidden("kind", "secret")
                        Self.select(
                            &html, id: "secret_grace_seconds", label: "The old secret key keeps working for",
                            selected: rotating?.form["secret_grace_seconds"] ?? "0",
                            options: [
                                ("0", "no time (stop now)"), ("3600", "1 hour"), ("86400", "24 hours"),
                                ("604800", "7 days"),
                            ])
                        Self.input(
                            &html, id: "rotate-secret-password", name: "password", label: "Your password",
                            type: "password", autocomplete: "current-password", refusal: rotating)
                        html.element(
                            "button", [("type", "submit"), ("class", "danger")], text: "Rotate the secret key")
                    }
                }
            }
            html.element("section", [("aria-labelledby", "signing-title")]) { html in
                html.element(
                    "h2", [("id", "signing-title")], text: "Session signing keys (ES256, published in the JWKS)")
                Self.table(&html, caption: nil, headers: ["Key ID", "Created", "State"], rows: signing) { html, key in
                    html.element("td") { $0.element("code", text: key.kid) }
                    html.element("td") { ConsoleFormat.time(key.createdAt, in: &$0) }
                    html.element("td") { html in
                        if let retiredAt = key.retiredAt {
                            let until = retiredAt + core.retiredSigningKeyWindow
                            html.text(until > now ? "retired; in the JWKS until " : "expired; left the JWKS at ")
                            ConsoleFormat.time(until, in: &html)
                        } else {
                            html.text("current: signs every new session JWT")
                        }
                    }
                }
                if admin {
                    Self.passwordForm(
                        &html, action: "rotate-signing-key", csrf: viewer.csrf, fields: [],
                        button: "Rotate the signing key", id: "rotate-signing", danger: false, refusal: refusal)
                }
            }
        }
    }

    /// `POST /console/rotate-api-key`: the publishable key (admins) or the secret key (owners), with
    /// the password; the new key is shown once on the Keys page the redirect lands on.
    func rotateAPIKey(_ request: ConsoleRequest) async throws -> Response {
        let kind: APIKeyKind
        switch request.form["kind"] {
        case "publishable": kind = .publishable
        case "secret":
            guard request.viewer.may(.owner) else { throw ConsoleFailure.forbidden }
            kind = .secret
        default: throw ConsoleFailure.invalid("kind", "Choose the publishable or the secret key.")
        }
        let graceField = kind == .secret ? "secret_grace_seconds" : "grace_seconds"
        guard let grace = request.form[graceField].flatMap({ Int64($0) }) else {
            throw ConsoleFailure.invalid(graceField, "Choose how long the old key keeps working.")
        }
        let rotated = try await actions.rotateAPIKey(
            request.runtime, kind: kind, graceSeconds: grace, origin: request.origin(addresses: addresses))
        if kind == .secret {
            request.context.logger.notice(
                "secret key rotated in the console",
                metadata: ["project": "\(request.runtime.id)", "operator": "\(request.viewer.operatorID)"])
        }
        let title = kind == .secret ? "New secret key" : "New publishable key"
        return try await redirect(
            request, to: ConsoleURL("keys"),
            flash: [("title", title), ("value", rotated.key), ("notice", "A new \(kind.rawValue) key was made.")])
    }

    /// `POST /console/rotate-signing-key`
    func rotateSigningKey(_ request: ConsoleRequest) async throws -> Response {
        let record = try await actions.rotateSigningKey(request.runtime, origin: request.origin(addresses: addresses))
        return try await redirect(
            request, to: ConsoleURL("keys"),
            flash: [("notice", "The signing key was rotated: \(record.kid) signs from now on.")])
    }

    /// `POST /console/delete-identity-secret`
    func deleteIdentitySecret(_ request: ConsoleRequest) async throws -> Response {
        try await actions.deleteIdentitySecret(
            request.runtime, kid: request.form["kid"] ?? "", origin: request.origin(addresses: addresses))
        return ConsoleHTTP.redirect(ConsoleURL("keys", [("notice", "secret-deleted")]))
    }

    /// A form of hidden fields, the operator's password and one button; `refusal`, when about this
    /// form (same action and hidden fields), puts its message beside the password.
    static func passwordForm(
        _ html: inout HTML, action: String, csrf: String, fields: [(StaticString, String)], button: String, id: String,
        danger: Bool, refusal: ConsoleRefusal? = nil
    ) {
        let refusal = refusal?.matching(action, fields)
        html.element("form", [("method", "post"), ("action", action), ("class", "inline-form")]) { html in
            html.hidden("csrf", csrf)
            for (name, value) in fields { html.hidden(name, value) }
            input(
                &html, id: "\(id)-password", name: "password", label: "Your password", type: "password",
                autocomplete: "current-password", refusal: refusal)
            if let refusal, refusal.field == nil { fieldError(&html, id: "\(id)-form", refusal) }
            html.element("button", [("type", "submit"), ("class", danger ? "danger" : nil)], text: button)
        }
    }

    // MARK: Settings

    /// One setting as the settings form shows it.
    private struct SettingField: Sendable {
        var name: String
        var label: String
        var value: @Sendable (ProjectSettings) -> String
        var kind: Kind
        enum Kind { case flag, number, text }
    }

    private static let settingFields: [SettingField] = [
        SettingField(
            name: "allow_unverified_identify", label: "Accept the client-asserted user_id form (unverified)",
            value: { $0.allowUnverifiedIdentify ? "true" : "false" }, kind: .flag),
        SettingField(
            name: "require_audience", label: "Identity tokens must name this project in aud",
            value: { $0.requireAudience ? "true" : "false" }, kind: .flag),
        SettingField(
            name: "expected_issuer", label: "Expected iss (empty: any)", value: { $0.expectedIssuer ?? "" },
            kind: .text),
        SettingField(
            name: "max_identity_token_lifetime_seconds", label: "Longest identity-token lifetime (seconds, 1–86400)",
            value: { String($0.maxIdentityTokenLifetimeSeconds) }, kind: .number),
        SettingField(
            name: "leeway_seconds", label: "Clock leeway (seconds, 0–600)", value: { String($0.leewaySeconds) },
            kind: .number),
        SettingField(
            name: "anonymous_session_minutes", label: "Anonymous session length (minutes, 5–525600)",
            value: { String($0.anonymousSessionMinutes) }, kind: .number),
        SettingField(
            name: "identified_session_minutes", label: "Identified session length (minutes, 5–525600)",
            value: { String($0.identifiedSessionMinutes) }, kind: .number),
        SettingField(
            name: "anonymous_starts_per_minute", label: "Anonymous starts per client per minute (empty: unlimited)",
            value: { $0.rateLimits.anonymousStartsPerMinute.map(String.init) ?? "" }, kind: .number),
        SettingField(
            name: "failed_identifies_per_minute", label: "Failed identifies per client per minute (empty: unlimited)",
            value: { $0.rateLimits.failedIdentifiesPerMinute.map(String.init) ?? "" }, kind: .number),
        SettingField(
            name: "failed_identifies_per_installation_per_minute",
            label: "Failed identifies per installation per minute (empty: unlimited)",
            value: { $0.rateLimits.failedIdentifiesPerInstallationPerMinute.map(String.init) ?? "" }, kind: .number),
    ]

    /// What each risky setting does, under its field.
    private static let settingHelp: [String: String] = [
        "allow_unverified_identify":
            "Lets a client sign in as any user_id it names, without a token your backend signed: for development only.",
        "require_audience": "Refuses identity tokens minted for another project.",
        "expected_issuer": "Refuses identity tokens whose iss is not this value.",
        "leeway_seconds": "How far clocks may disagree; more accepts expired tokens for longer.",
        "max_identity_token_lifetime_seconds":
            "Refuses identity tokens that live longer: a stolen one is useful for less time.",
    ]

    /// `GET /console/settings`
    func settings(_ request: ConsoleRequest) async throws -> Response {
        settingsForm(request, settings: request.runtime.settings, message: nil, status: .ok)
    }

    private func settingsForm(
        _ request: ConsoleRequest, settings: ProjectSettings, message: ConsoleMessage?, status: HTTPResponse.Status,
        invalid: (field: String, message: String)? = nil, typed: ConsoleForm? = nil
    ) -> Response {
        let viewer = request.viewer
        let admin = viewer.may(.admin)
        return page(request, title: "Settings", section: .settings, message: message, status: status) { html in
            html.element("form", [("method", "post"), ("action", "settings"), ("class", "stack")]) { html in
                html.hidden("csrf", viewer.csrf)
                html.hidden("base", String(request.runtime.project.updatedAt))
                for field in Self.settingFields {
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
                    if let help = Self.settingHelp[field.name] { html.element("p", [("class", "small")], text: help) }
                }
                if admin { html.element("button", [("type", "submit")], text: "Review changes") }
            }
        }
    }

    /// `POST /console/settings`: the first post shows what would change; the post with `confirm`
    /// saves it, unless the settings changed in between.
    func saveSettings(_ request: ConsoleRequest) async throws -> Response {
        let form = request.form
        let current = request.runtime.settings
        do {
            return try await saveSettings(request, proposed: try Self.settings(form, onto: current), current: current)
        } catch let error as CoreError where error.code == .invalidRequest {
            // The refusal beside its field, named by its label, what was typed kept.
            let field = Self.settingFields.first { error.message.contains($0.name) }
            var message = error.message
            if let field { message = message.replacingOccurrences(of: field.name, with: "“\(field.label)”") }
            return settingsForm(
                request, settings: current, message: .error(error.code.rawValue, message), status: .badRequest,
                invalid: field.map { ($0.name, message) }, typed: form)
        } catch let changed as SettingsChanged {
            return settingsChanged(request, settings: changed.project.settings)
        }
    }

    /// The settings the form's fields set on `base`; the settings the form does not show stay as
    /// `base` holds them.
    private static func settings(_ form: ConsoleForm, onto base: ProjectSettings) throws -> ProjectSettings {
        func number(_ name: String) throws -> Int64? {
            guard let text = form.value(name) else { return nil }
            guard text.utf8.count <= 12, let value = Int64(text) else {
                throw CoreError.invalidRequest("\(name) must be a whole number.")
            }
            return value
        }
        var proposed = base
        proposed.allowUnverifiedIdentify = form["allow_unverified_identify"] == "true"
        proposed.requireAudience = form["require_audience"] == "true"
        proposed.expectedIssuer = form.value("expected_issuer")
        if let value = try number("max_identity_token_lifetime_seconds") {
            proposed.maxIdentityTokenLifetimeSeconds = value
        }
        if let value = try number("leeway_seconds") { proposed.leewaySeconds = value }
        if let value = try number("anonymous_session_minutes") { proposed.anonymousSessionMinutes = value }
        if let value = try number("identified_session_minutes") { proposed.identifiedSessionMinutes = value }
        for name in RateLimits.wireNames {
            let value = try number(name)
            if let value, !RateLimits.range.contains(value) {
                throw CoreError.invalidRequest(
                    "\(name) must be between 1 and \(RateLimits.range.upperBound), or empty (unlimited).")
            }
            _ = proposed.rateLimits.set(name, to: value)
        }
        do {
            try AdminActions.check(proposed)
        } catch {
            throw CoreError.invalidRequest(error.message)
        }
        return proposed
    }

    /// The settings changed since the form was opened: the form again, with the settings as they are.
    private func settingsChanged(_ request: ConsoleRequest, settings: ProjectSettings) -> Response {
        settingsForm(
            request, settings: settings,
            message: .error("settings_changed", "The settings changed since you opened this page; here they are now."),
            status: .conflict)
    }

    private func saveSettings(_ request: ConsoleRequest, proposed: ProjectSettings, current: ProjectSettings)
        async throws -> Response
    {
        let form = request.form
        let base = form["base"]
        guard base == String(request.runtime.project.updatedAt) else {
            return settingsChanged(request, settings: current)
        }
        let changes = Self.settingFields.compactMap { field -> (SettingField, String, String)? in
            let before = field.value(current)
            let after = field.value(proposed)
            return before == after ? nil : (field, before, after)
        }
        if changes.isEmpty {
            return settingsForm(request, settings: current, message: .notice("Nothing changed."), status: .ok)
        }
        if form["confirm"] == "1" {
            // Checked and applied on the project's row as locked, not on the cached copy this page
            // was drawn from: a change saved meanwhile (here or by the admin API) is not undone.
            _ = try await actions.updateSettings(request.runtime, origin: request.origin(addresses: addresses)) {
                locked in
                guard base == String(locked.updatedAt) else { throw SettingsChanged(project: locked) }
                return try Self.settings(form, onto: locked.settings)
            }
            return ConsoleHTTP.redirect(ConsoleURL("settings", [("notice", "settings-saved")]))
        }
        let viewer = request.viewer
        return page(request, title: "Review the settings", section: .settings) { html in
            Self.table(&html, caption: "What will change", headers: ["Setting", "Now", "After saving"], rows: changes) {
                html, change in
                html.element("td", text: change.0.label)
                html.element("td") { $0.element("del", text: change.1.isEmpty ? "(none)" : change.1) }
                html.element("td") { $0.element("ins", text: change.2.isEmpty ? "(none)" : change.2) }
            }
            html.element("form", [("method", "post"), ("action", "settings"), ("class", "inline-form")]) { html in
                html.hidden("csrf", viewer.csrf)
                html.hidden("base", String(request.runtime.project.updatedAt))
                html.hidden("confirm", "1")
                for field in Self.settingFields {
                    let value = field.value(proposed)
                    if field.kind == .flag {
                        if value == "true" {
                            html.void("input", [("type", "hidden"), ("name", field.name), ("value", "true")])
                        }
                    } else {
                        html.void("input", [("type", "hidden"), ("name", field.name), ("value", value)])
                    }
                }
                html.element("button", [("type", "submit")], text: "Save these changes")
                html.link(ConsoleURL("settings"), text: "Cancel")
            }
        }
    }

    // MARK: Audit

    /// `GET /console/audit?type=&actor=&profile=&from=&to=&cursor=`: changes made with the secret key
    /// or by operators, newest first, filtered by type, actor, profile and days (UTC).
    func audit(_ request: ConsoleRequest) async throws -> Response {
        let query = request.query
        let filter = try Self.auditFilter(query)
        let (before, limit) = try AuditQuery.parse(cursor: query.value("cursor"), limit: nil)
        let entries = try await core.store.auditEvents(
            projectID: request.runtime.id, filter: filter, before: before, limit: limit + 1)
        let shown = Array(entries.prefix(limit))
        let next = entries.count > limit ? shown.last?.sequence : nil
        let operators = try await core.store.operators()
        let operatorEmails = Dictionary(operators.map { ($0.id, $0.email) }, uniquingKeysWith: { first, _ in first })
        let accounts = request.viewer.may(.owner) ? try await core.store.operatorAudit(before: nil, limit: 50) : []
        // The filters as they were asked for, carried by the pager and the CSV link.
        let filters = query.fields.filter { ["type", "actor", "profile", "from", "to"].contains($0.name) }
            .filter { !$0.value.isEmpty }.map { ($0.name, Optional($0.value)) }
        return page(request, title: "Audit log", section: .audit) { html in
            html.element(
                "p", text: "Every change made with the project's secret key or by an operator, newest first.")
            html.element("form", [("method", "get"), ("action", "audit"), ("class", "filters")]) { html in
                Self.field(
                    &html, id: "type", label: "Type", type: "text", value: query.value("type"), required: false,
                    extra: [("list", "event-types")])
                html.element("datalist", [("id", "event-types")]) { html in
                    for type in EventTypes.all { html.void("option", [("value", type)]) }
                }
                Self.select(
                    &html, id: "actor", label: "Actor", selected: query.value("actor"),
                    options: [("", "Anyone"), ("secret_key", "Secret API key")]
                        + operators.map { ($0.id, $0.email) })
                Self.field(
                    &html, id: "profile", label: "Profile ID", type: "text", value: query.value("profile"),
                    required: false)
                Self.field(
                    &html, id: "from", label: "From (UTC)", type: "date", value: query.value("from"), required: false)
                Self.field(
                    &html, id: "to", label: "To (UTC)", type: "date", value: query.value("to"), required: false)
                html.element("button", [("type", "submit")], text: "Filter")
            }
            html.element("p") { html in
                html.link(
                    ConsoleURL("audit.csv", filters), [("id", "audit-csv"), ("download", "")],
                    text: filters.isEmpty ? "Download every entry as CSV" : "Download the matching entries as CSV")
            }
            if shown.isEmpty {
                html.element("p", text: filters.isEmpty ? "No entry in the event window." : "No entry matches.")
            } else {
                Self.eventTable(
                    &html, shown, caption: "Audit entries", showReason: true, operatorEmails: operatorEmails)
            }
            if let next {
                html.element("p", [("class", "pager")]) { html in
                    html.link(
                        ConsoleURL("audit", filters + [("cursor", String(next))]), [("rel", "next")],
                        text: "Older entries")
                }
            }
            if request.viewer.may(.owner) {
                html.element("section", [("aria-labelledby", "accounts-audit-title")]) { html in
                    html.element(
                        "h2", [("id", "accounts-audit-title")],
                        text: "Operator accounts: sign-ins, failures, lockouts, invitations, removals (latest 50)")
                    Self.operatorAuditTable(&html, accounts)
                }
            }
        }
    }

    /// `GET /console/audit.csv?type=&actor=&profile=&from=&to=`: every matching entry, newest first,
    /// as CSV (RFC 4180), written a thousand entries at a time.
    func auditCSV(_ request: ConsoleRequest) async throws -> Response {
        let filter = try Self.auditFilter(request.query)
        let projectID = request.runtime.id
        let store = core.store
        let operatorEmails = Dictionary(
            try await store.operators().map { ($0.id, $0.email) }, uniquingKeysWith: { first, _ in first })
        var headers: HTTPFields = [
            .contentType: "text/csv; charset=utf-8",
            .contentDisposition: "attachment; filename=\"tessera-audit-\(projectID).csv\"",
        ]
        ConsoleHTTP.secure(&headers)
        let body = ResponseBody { writer in
            try await writer.write(ByteBuffer(string: AuditCSV.header))
            var before: Int64?
            while true {
                let batch = try await store.auditEvents(
                    projectID: projectID, filter: filter, before: before, limit: AuditCSV.batchSize)
                var text = ""
                for event in batch { text += AuditCSV.row(event, operatorEmails: operatorEmails) }
                if !text.isEmpty { try await writer.write(ByteBuffer(string: text)) }
                guard batch.count == AuditCSV.batchSize, let last = batch.last else { break }
                before = last.sequence
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    /// The audit filters of a console query (see ``AuditQuery/filter(type:actor:profile:from:to:)``).
    static func auditFilter(_ query: ConsoleForm) throws(CoreError) -> AuditFilter {
        try AuditQuery.filter(
            type: query.value("type"), actor: query.value("actor"), profile: query.value("profile"),
            from: query.value("from"), to: query.value("to"))
    }
}

/// The audit log as CSV: one header line, then one line per entry (RFC 4180, CRLF line ends).
enum AuditCSV {
    static let batchSize = 1000
    static let header = "sequence,type,at,actor,actor_id,actor_email,profile_id,client_address,reason,data\r\n"

    static func row(_ event: EventRecord, operatorEmails: [String: String]) -> String {
        let email = event.actor.kind == .operator ? event.actor.id.flatMap { operatorEmails[$0] } : nil
        let fields = [
            String(event.sequence), event.type, RFC3339.string(event.createdAt), event.actor.kind.rawValue,
            event.actor.id ?? "", email ?? "", event.profileID ?? "", event.clientAddress ?? "", event.reason ?? "",
            event.data,
        ]
        return fields.map(field).joined(separator: ",") + "\r\n"
    }

    /// A field quoted, its quotes doubled; one that a spreadsheet would run as a formula (it starts
    /// with `=`, `+`, `-`, `@`, a tab or a carriage return) starts with `'` instead (OWASP's advice).
    static func field(_ value: String) -> String {
        var value = value
        if let first = value.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) {
            value = "'" + value
        }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// The project's settings changed since the settings form was opened (seen on the locked row).
private struct SettingsChanged: Error {
    let project: ProjectRecord
}
