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
        return page(
            request,
            KeysPage(
                revealed: flash.fields.flatMap { fields in
                    fields["title"].flatMap { title in fields["value"].map { (title, $0) } }
                },
                identitySecrets: secrets, apiKeys: apiKeys, hints: hints, signingKeys: signing,
                retiredSigningKeyWindow: core.retiredSigningKeyWindow, projectSlug: request.runtime.project.slug,
                now: now,
                viewer: request.viewer, refusal: request.refusal),
            message: flash.message)
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

    // MARK: Settings

    /// `GET /console/settings`
    func settings(_ request: ConsoleRequest) async throws -> Response {
        settingsForm(request, settings: request.runtime.settings, message: nil, status: .ok)
    }

    private func settingsForm(
        _ request: ConsoleRequest, settings: ProjectSettings, message: ConsoleMessage?, status: HTTPResponse.Status,
        invalid: (field: String, message: String)? = nil, typed: ConsoleForm? = nil
    ) -> Response {
        page(
            request,
            SettingsPage(
                settings: settings, base: request.runtime.project.updatedAt, invalid: invalid, typed: typed,
                viewer: request.viewer),
            message: message, status: status)
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
            let field = SettingsPage.fields.first { error.message.contains($0.name) }
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
        let changes = SettingsPage.fields.compactMap { field -> (SettingsPage.Field, String, String)? in
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
        return page(
            request,
            SettingsReviewPage(
                changes: changes.map { ($0.0.label, $0.1, $0.2) }, proposed: proposed,
                base: request.runtime.project.updatedAt, viewer: request.viewer))
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
        return page(
            request,
            AuditPage(
                query: query, filters: filters, entries: shown, next: next, operators: operators,
                operatorEmails: operatorEmails, accounts: accounts, viewer: request.viewer))
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
