import Foundation
import HTTPTypes
import Hummingbird

/// The overview, search, the profile list, a profile with its actions, and sessions.
extension ConsoleController {
    // MARK: Overview

    /// `GET /console/`: counts, active users, identify outcomes per day, App Attest, webhooks that fail,
    /// old secrets.
    func overview(_ request: ConsoleRequest) async throws -> Response {
        let runtime = request.runtime
        let now = core.currentTime().seconds
        let store = core.store
        let counts = counts.get(projectID: runtime.id, now: now) {
            try await store.projectCounts(projectID: runtime.id, now: now)
        }
        let activity = core.activeUsers.summary(projectID: runtime.id, now: now)
        let attestCounts = attestCounts.get(projectID: runtime.id, now: now) {
            try await store.appAttestCounts(projectID: runtime.id)
        }
        let attestMode = runtime.settings.appAttest.mode
        let webhooks = try await core.store.webhooks(projectID: runtime.id, afterID: nil, limit: 200)
        // Disabled, or holding an undelivered event older than five minutes.
        let behind = Dictionary(
            try await core.store.oldestPendingWebhookDeliveries().map { ($0.webhookID, $0.eventCreatedAt) },
            uniquingKeysWith: min)
        // The same state as the Webhooks pages: from the latest attempts ("failing" at once).
        var states: [String: String] = [:]
        for webhook in webhooks where webhook.enabled { states[webhook.id] = try await state(runtime, webhook) }
        let troubled = webhooks.filter { webhook in
            !webhook.enabled || (behind[webhook.id].map { now - $0 > Self.webhookBehindSeconds } ?? false)
                || states[webhook.id]?.hasPrefix("failing") == true || states[webhook.id]?.hasPrefix("retrying") == true
        }
        let secrets = try await core.store.identitySecrets(projectID: runtime.id)
        let old = secrets.filter { now - $0.createdAt > Self.oldSecretSeconds }
        return page(request, title: "Overview", section: .overview) { html in
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
            Self.activitySection(activity, in: &html)
            Self.identifySection(activity?.value, in: &html)
            Self.appAttestSection(mode: attestMode, counts: attestCounts?.value, summary: activity?.value, in: &html)
            html.element("section", [("aria-labelledby", "webhooks-title")]) { html in
                html.element("h2", [("id", "webhooks-title")], text: "Webhooks that need attention")
                if troubled.isEmpty {
                    html.element(
                        "p", text: "No webhook is failing, disabled or behind (\(webhooks.count) in all).")
                } else {
                    Self.table(&html, caption: nil, headers: ["Webhook", "State", "Since"], rows: troubled) {
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
                if old.isEmpty {
                    html.element("p", text: "None: \(secrets.count) identity secret(s), all younger than 90 days.")
                } else {
                    Self.table(&html, caption: nil, headers: ["Key ID", "Created", "Last used"], rows: old) {
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

    /// The most live sessions and devices a profile page lists (a profile may have thousands).
    static let rowsShown = 100

    /// How old an undelivered event makes a webhook one that needs attention.
    static let webhookBehindSeconds: Int64 = 300

    /// When an identity secret counts as old on the overview.
    static let oldSecretSeconds: Int64 = 90 * 86_400

    // MARK: Search

    /// `GET /console/search?q=`: any identifier to its profile (as `GET /v1/admin/lookup`).
    func search(_ request: ConsoleRequest) async throws -> Response {
        let text = request.query.value("q") ?? ""
        if InputRules.isIdentifier(text, prefix: "whk_"),
            try await core.store.webhook(projectID: request.runtime.id, id: text) != nil
        {
            return ConsoleHTTP.redirect(ConsoleURL("webhook", [("id", text)]))
        }
        if !text.isEmpty, text.unicodeScalars.count <= 320,
            let profile = try await core.store.lookupProfile(projectID: request.runtime.id, identifier: text)
        {
            return ConsoleHTTP.redirect(ConsoleURL("profile", [("id", profile.id)]))
        }
        return page(
            request, title: "Search", section: nil,
            message: .error("not_found", "Nothing in this project matches “\(text.prefix(120))”."),
            status: .notFound
        ) { html in
            html.element(
                "p",
                text:
                    "Search takes a profile ID (usr_…), a session ID (ses_…), a device ID (dev_…), a webhook ID (whk_…), an installation ID, an external user ID, an email or a push token. To find profiles by the start of an email, name or external ID, use the search field of the profile list."
            )
        }
    }

    // MARK: Profiles

    /// `GET /console/profiles`: the profile list with the admin API's filters, newest first.
    func profiles(_ request: ConsoleRequest) async throws -> Response {
        let query = request.query
        let filter = try Self.profileFilter(query, projectID: request.runtime.id, limit: 50)
        var fetch = filter
        fetch.limit = filter.limit + 1
        async let counted = core.store.countProfiles(filter, cap: Self.profileCountCap)
        var found = try await core.store.profiles(fetch)
        let next = found.count > filter.limit ? found[filter.limit - 1].id : nil
        found = Array(found.prefix(filter.limit))
        let count = try await counted
        return page(request, title: "Profiles", section: .profiles) { html in
            html.element("form", [("method", "get"), ("action", "profiles"), ("class", "filters")]) { html in
                Self.field(
                    &html, id: "search", label: "Email, name or external ID starts with", type: "search",
                    value: filter.search, required: false)
                Self.select(
                    &html, id: "kind", label: "Kind", selected: query.value("kind"),
                    options: [("", "Any"), ("anonymous", "Anonymous"), ("identified", "Identified")])
                Self.select(
                    &html, id: "verified", label: "Verified", selected: query.value("verified"),
                    options: [("", "Any"), ("true", "Verified"), ("false", "Not verified")])
                Self.select(
                    &html, id: "blocked", label: "Blocked", selected: query.value("blocked"),
                    options: [("", "Any"), ("true", "Blocked"), ("false", "Not blocked")])
                Self.field(&html, id: "email", label: "Email", type: "text", value: filter.email, required: false)
                Self.field(
                    &html, id: "external_id", label: "External ID", type: "text", value: filter.externalID,
                    required: false)
                Self.field(
                    &html, id: "installation_id", label: "Installation ID", type: "text", value: filter.installationID,
                    required: false)
                Self.select(
                    &html, id: "order", label: "Order", selected: query.value("order"),
                    options: [("newest", "Newest first"), ("oldest", "Oldest first")])
                html.element("button", [("type", "submit")], text: "Filter")
            }
            html.element(
                "p", [("id", "profile-count"), ("role", "status")],
                text: Self.profileCountText(
                    count,
                    filtered: query.fields.contains {
                        !["cursor", "notice", "order"].contains($0.name) && !$0.value.isEmpty
                    }))
            if request.viewer.may(.admin) {
                let filters = query.fields.filter { $0.name != "cursor" && $0.name != "notice" && !$0.value.isEmpty }
                    .map { ($0.name, Optional($0.value)) }
                html.element("p") { html in
                    html.link(
                        ConsoleURL("profiles.csv", filters), [("id", "profiles-csv"), ("download", "")],
                        text: filters.isEmpty
                            ? "Download every profile as CSV" : "Download the matching profiles as CSV")
                }
            }
            if found.isEmpty {
                html.element("p", text: "No profile matches.")
            } else {
                profileTable(&html, found, viewer: request.viewer)
            }
            if let next {
                var links = query.fields.filter { $0.name != "cursor" && $0.name != "notice" }.map {
                    ($0.name, Optional($0.value))
                }
                links.append(("cursor", next))
                html.element("p", [("class", "pager")]) { html in
                    html.link(
                        ConsoleURL("profiles", links), [("rel", "next")],
                        text: filter.oldestFirst ? "Newer profiles" : "Older profiles")
                }
            }
        }
    }

    /// `GET /console/profiles.csv?kind=&verified=&blocked=&email=&external_id=&installation_id=`
    /// (admins and owners): every profile the filters match, newest first, as CSV (RFC 4180),
    /// written a thousand at a time. Each export is logged with the operator and the row count.
    func profilesCSV(_ request: ConsoleRequest) async throws -> Response {
        let first = try Self.profileFilter(request.query, projectID: request.runtime.id, limit: AuditCSV.batchSize)
        let store = core.store
        let logger = request.context.logger
        let operatorID = request.viewer.operatorID
        var headers: HTTPFields = [
            .contentType: "text/csv; charset=utf-8",
            .contentDisposition: "attachment; filename=\"tessera-profiles-\(request.runtime.id).csv\"",
        ]
        ConsoleHTTP.secure(&headers)
        let body = ResponseBody { writer in
            try await writer.write(
                ByteBuffer(string: "id,kind,external_id,email,name,verified,blocked_at,created_at,updated_at\r\n"))
            var (filter, rows) = (first, 0)
            while true {
                let batch = try await store.profiles(filter)
                var text = ""
                for profile in batch {
                    let fields = [
                        profile.id, profile.kind.rawValue, profile.externalID ?? "", profile.email ?? "",
                        profile.name ?? "", profile.verified ? "true" : "false",
                        profile.blockedAt.map(RFC3339.string) ?? "", RFC3339.string(profile.createdAt),
                        RFC3339.string(profile.updatedAt),
                    ]
                    text += fields.map(AuditCSV.field).joined(separator: ",") + "\r\n"
                }
                rows += batch.count
                if !text.isEmpty { try await writer.write(ByteBuffer(string: text)) }
                guard batch.count == filter.limit, let last = batch.last else { break }
                filter.beforeID = last.id
            }
            logger.notice("profiles exported as CSV", metadata: ["operator": "\(operatorID)", "rows": "\(rows)"])
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    /// The profile list's filters of a console query, parsed as `GET /v1/admin/profiles` parses
    /// them (``ProfileListQuery``): `kind`, `verified`, `blocked`, `email`, `search`,
    /// `external_id`, `installation_id`, `order` and `cursor`; an empty field is no filter.
    static func profileFilter(_ query: ConsoleForm, projectID: String, limit: Int) throws -> ProfileQuery {
        var filter = try ProfileListQuery.parse(projectID: projectID) { name in
            name == "limit" ? nil : query.value(name)
        }
        filter.limit = limit
        return filter
    }

    /// The most profiles the list counts; above it, the page says "more than".
    static let profileCountCap = 1_000

    /// "3 profiles match.", "More than 1,000 profiles match.", or, with no filter, "3 profiles.".
    static func profileCountText(_ count: Int, filtered: Bool) -> String {
        let number =
            count > profileCountCap
            ? "More than \(profileCountCap.formatted(.number.locale(Locale(identifier: "en_US"))))"
            : count.formatted(.number.locale(Locale(identifier: "en_US")))
        let noun = count == 1 ? "profile" : "profiles"
        guard filtered else { return "\(number) \(noun)." }
        return "\(number) \(noun) \(count == 1 ? "matches" : "match")."
    }

    private func profileTable(_ html: inout HTML, _ profiles: [ProfileRecord], viewer: ConsoleViewer) {
        Self.table(
            &html, caption: "Profiles",
            headers: ["Profile", "Kind", "External ID", "Email", "Verified", "Created"], rows: profiles
        ) { html, profile in
            html.element("td") { html in
                html.link(ConsoleURL("profile", [("id", profile.id)]), text: profile.id)
                if profile.blocked { html.element("span", [("class", "badge danger")], text: "blocked") }
            }
            html.element("td", text: profile.kind.rawValue)
            html.element("td", text: profile.externalID ?? "—")
            html.element("td", text: viewer.shown(email: profile.email) ?? "—")
            html.element("td", text: profile.verified ? "yes" : "no")
            html.element("td") { ConsoleFormat.time(profile.createdAt, in: &$0) }
        }
    }

    /// `true`/`false`/absent, as the list endpoint reads its flags.
    static func flag(_ value: String?, name: String) throws -> Bool? {
        switch value {
        case nil: return nil
        case "true": return true
        case "false": return false
        default: throw CoreError.invalidRequest("\(name) must be true or false.")
        }
    }

    // MARK: A profile

    /// `GET /console/profile?id=`: the profile, its live and ended sessions, devices, aliases and events.
    func profile(_ request: ConsoleRequest) async throws -> Response {
        let runtime = request.runtime
        guard let id = request.query.value("id"), InputRules.isIdentifier(id, prefix: "usr_"),
            let profile = try await core.store.profile(projectID: runtime.id, id: id)
        else { throw CoreError.notFound }
        let now = core.currentTime().seconds
        let (live, liveCount) = try await core.store.newestLiveSessions(
            profileID: profile.id, now: now, limit: Self.rowsShown)
        let devices = try await core.store.liveDevices(profileID: profile.id, now: now)
        let aliases = try await core.store.aliases(projectID: runtime.id, profileID: profile.id)
        let events = try await core.store.recentEvents(
            projectID: runtime.id, type: nil, profileID: profile.id, before: nil, limit: 100)
        // The operators who acted on it, by email (for the timeline and for who blocked it).
        var operatorEmails: [String: String] = [:]
        for id in Set(events.compactMap { $0.actor.kind == .operator ? $0.actor.id : nil }) {
            operatorEmails[id] = try await core.store.operatorRecord(id: id)?.email
        }
        // Who blocked the profile and why, from its latest profile.blocked event (the audit's own record).
        var blockedFact = "no"
        if let blockedAt = profile.blockedAt {
            blockedFact = "since " + ConsoleFormat.time(blockedAt)
            if let event = events.first(where: { $0.type == "profile.blocked" }) {
                var who = event.actor.kind.rawValue
                if event.actor.kind == .operator, let id = event.actor.id { who = operatorEmails[id] ?? id }
                blockedFact += ", by \(who)" + (event.reason.map { ": \($0)" } ?? "")
            }
        }
        let ended = try await core.store.recentEvents(
            projectID: runtime.id, type: "session.ended", profileID: profile.id, before: nil, limit: 100
        ).compactMap(EndedSession.init)
        let installationIDs = try await core.store.installationIDs(projectID: runtime.id, profileID: profile.id)
        let attestRecords = try await core.store.appAttestRecords(
            projectID: runtime.id, installationIDs: installationIDs)
        let installations = installationIDs.map { id in
            (id: id, record: attestRecords.first { $0.installationID == id })
        }
        let viewer = request.viewer
        return page(request, title: "Profile \(profile.id)", section: .profiles) { html in
            html.element("dl", [("class", "facts")]) { html in
                func fact(_ name: String, _ value: String?) {
                    html.element("div") { html in
                        html.element("dt", text: name)
                        html.element("dd", text: value ?? "—")
                    }
                }
                fact("Kind", profile.kind.rawValue)
                fact("External ID", profile.externalID)
                fact("Verified", profile.verified ? "yes (signed identity token)" : "no")
                fact("Email", viewer.shown(email: profile.email))
                fact("Name", viewer.may(.support) ? profile.name : profile.name.map { _ in "•••" })
                fact("Created", ConsoleFormat.time(profile.createdAt))
                fact("Updated", ConsoleFormat.time(profile.updatedAt))
                fact("Blocked", blockedFact)
            }
            if viewer.may(.support) {
                profileActions(
                    &html, profile: profile, viewer: viewer, hasSessions: !live.isEmpty, refusal: request.refusal)
            }
            html.element("section", [("aria-labelledby", "live-title")]) { html in
                html.element("h2", [("id", "live-title")], text: "Live sessions (\(liveCount))")
                if live.isEmpty {
                    html.element("p", text: "No live session.")
                } else {
                    if liveCount > live.count {
                        html.element(
                            "p", text: "The \(live.count) newest of \(liveCount); search finds any other by its ID.")
                    }
                    let headers =
                        ["Session", "Kind", "Device key", "Installation", "Created", "Last authenticated", "Expires"]
                        + (viewer.may(.support) ? ["Action"] : [])
                    Self.table(&html, caption: nil, headers: headers, rows: live) { html, session in
                        html.element("td", [("id", session.id)]) { $0.element("code", text: session.id) }
                        html.element("td", text: session.kind.rawValue)
                        html.element("td") { Self.binding(session, in: &$0) }
                        html.element("td", text: session.installationID ?? "—")
                        html.element("td") { ConsoleFormat.time(session.createdAt, in: &$0) }
                        html.element("td") { ConsoleFormat.time(session.lastAuthenticatedAt, in: &$0) }
                        html.element("td") { ConsoleFormat.time(session.expiresAt, in: &$0) }
                        if viewer.may(.support) {
                            html.element("td") { html in
                                Self.actionForm(
                                    &html, action: "revoke-session", csrf: viewer.csrf,
                                    fields: [("profile_id", profile.id), ("session_id", session.id)],
                                    button: "End session", label: "End session \(session.id)")
                            }
                        }
                    }
                }
            }
            html.element("section", [("aria-labelledby", "ended-title")]) { html in
                html.element("h2", [("id", "ended-title")], text: "Ended sessions")
                if ended.isEmpty {
                    html.element("p", text: "No ended session in the event window.")
                } else {
                    Self.table(&html, caption: nil, headers: ["Session", "Reason", "Ended", "By"], rows: ended) {
                        html, session in
                        html.element("td", [("id", session.sessionID)]) { $0.element("code", text: session.sessionID) }
                        html.element("td", text: session.reason)
                        html.element("td") { ConsoleFormat.time(session.at, in: &$0) }
                        html.element("td", text: session.actor)
                    }
                }
            }
            html.element("section", [("aria-labelledby", "devices-title")]) { html in
                html.element("h2", [("id", "devices-title")], text: "Devices (\(devices.count))")
                if devices.isEmpty {
                    html.element("p", text: "No device.")
                } else {
                    if devices.count > Self.rowsShown {
                        html.element("p", text: "The \(Self.rowsShown) newest of \(devices.count).")
                    }
                    let headers =
                        ["Device", "Platform", "Environment", "Push token", "Session", "Registered"]
                        + (viewer.may(.support) ? ["Action"] : [])
                    let shown = devices.sorted { $0.createdAt > $1.createdAt }.prefix(Self.rowsShown)
                    Self.table(&html, caption: nil, headers: headers, rows: Array(shown)) { html, device in
                        html.element("td", [("id", device.id)]) { $0.element("code", text: device.id) }
                        html.element("td", text: device.platform)
                        html.element("td", text: device.environment)
                        html.element("td") { $0.element("code", text: "…" + device.token.suffix(8)) }
                        html.element("td") { $0.element("code", text: device.sessionID) }
                        html.element("td") { ConsoleFormat.time(device.createdAt, in: &$0) }
                        if viewer.may(.support) {
                            html.element("td") { html in
                                Self.actionForm(
                                    &html, action: "remove-device", csrf: viewer.csrf,
                                    fields: [("profile_id", profile.id), ("device_id", device.id)],
                                    button: "Remove", label: "Remove device \(device.id)")
                            }
                        }
                    }
                }
            }
            Self.installationsSection(installations, in: &html)
            html.element("section", [("aria-labelledby", "aliases-title")]) { html in
                html.element("h2", [("id", "aliases-title")], text: "Merged profiles (aliases)")
                if aliases.isEmpty {
                    html.element("p", text: "No profile was merged into this one.")
                } else {
                    Self.table(&html, caption: nil, headers: ["Profile", "How", "When"], rows: aliases) { html, alias in
                        html.element("td") { $0.element("code", text: alias.aliasID) }
                        html.element("td", text: alias.how)
                        html.element("td") { ConsoleFormat.time(alias.createdAt, in: &$0) }
                    }
                }
            }
            html.element("section", [("aria-labelledby", "timeline-title")]) { html in
                html.element("h2", [("id", "timeline-title")], text: "Timeline")
                if events.isEmpty {
                    html.element("p", text: "Nothing happened to this profile in the event window.")
                } else {
                    html.element("ol", [("class", "timeline")]) { html in
                        for entry in ProfileTimeline.entries(events, operatorEmails: operatorEmails) {
                            html.element("li") { html in
                                ConsoleFormat.time(entry.at, in: &html)
                                html.text(" " + entry.text)
                            }
                        }
                    }
                }
            }
            html.element("section", [("aria-labelledby", "events-title")]) { html in
                html.element("h2", [("id", "events-title")], text: "Events")
                if events.isEmpty {
                    html.element("p", text: "No event in the event window.")
                } else {
                    Self.eventTable(
                        &html, events, caption: "The latest \(events.count), newest first",
                        operatorEmails: operatorEmails)
                }
            }
        }
    }

    /// The support and admin actions of a profile.
    private func profileActions(
        _ html: inout HTML, profile: ProfileRecord, viewer: ConsoleViewer, hasSessions: Bool, refusal: ConsoleRefusal?
    ) {
        html.element("section", [("aria-labelledby", "actions-title"), ("class", "actions")]) { html in
            html.element("h2", [("id", "actions-title")], text: "Actions")
            if hasSessions {
                Self.actionForm(
                    &html, action: "revoke-sessions", csrf: viewer.csrf, fields: [("profile_id", profile.id)],
                    button: "End every session", label: nil)
            }
            guard viewer.may(.admin) else { return }
            if profile.blocked {
                Self.actionForm(
                    &html, action: "unblock", csrf: viewer.csrf, fields: [("profile_id", profile.id)],
                    button: "Unblock", label: nil)
            } else {
                let blocking = refusal?.matching("block", [("profile_id", profile.id)])
                html.element("form", [("method", "post"), ("action", "block"), ("class", "inline-form")]) { html in
                    html.hidden("csrf", viewer.csrf)
                    html.hidden("profile_id", profile.id)
                    Self.field(
                        &html, id: "reason", label: "Reason for blocking", type: "text", required: false,
                        refusal: blocking)
                    Self.field(
                        &html, id: "password", label: "Your password", type: "password",
                        autocomplete: "current-password", refusal: blocking)
                    html.element("button", [("type", "submit"), ("class", "danger")], text: "Block")
                }
            }
            html.element("form", [("method", "post"), ("action", "erase"), ("class", "inline-form")]) { html in
                html.hidden("csrf", viewer.csrf)
                html.hidden("profile_id", profile.id)
                let erasing = refusal?.matching("erase", [("profile_id", profile.id)])
                Self.input(
                    &html, id: "confirm", name: "confirm",
                    label: "Type the profile ID (\(profile.id)) to erase it and its personal data", type: "text",
                    autocomplete: "off", extra: [("data-must-equal", profile.id)], refusal: erasing)
                Self.input(
                    &html, id: "erase-password", name: "password", label: "Your password", type: "password",
                    autocomplete: "current-password", refusal: erasing)
                html.element("button", [("type", "submit"), ("class", "danger")], text: "Erase profile")
            }
        }
    }

    // MARK: Actions

    /// `POST /console/revoke-session`
    func revokeSession(_ request: ConsoleRequest) async throws -> Response {
        let profileID = request.form["profile_id"] ?? ""
        let sessionID = request.form["session_id"] ?? ""
        let profile = try await actions.profile(request.runtime, id: profileID)
        guard let target = try await core.store.sessionContext(sessionID: sessionID),
            target.session.profileID == profile.id
        else { throw CoreError.notFound }
        try await actions.endSession(
            request.runtime, sessionID: sessionID, origin: request.origin(addresses: addresses))
        return ConsoleHTTP.redirect(ConsoleURL("profile", [("id", profile.id), ("notice", "revoked")]))
    }

    /// `POST /console/revoke-sessions`
    func revokeSessions(_ request: ConsoleRequest) async throws -> Response {
        let profileID = request.form["profile_id"] ?? ""
        let profile = try await actions.profile(request.runtime, id: profileID)
        try await actions.endSessions(
            request.runtime, profileID: profile.id, origin: request.origin(addresses: addresses))
        return ConsoleHTTP.redirect(ConsoleURL("profile", [("id", profile.id), ("notice", "revoked-all")]))
    }

    /// `POST /console/remove-device`
    func removeDevice(_ request: ConsoleRequest) async throws -> Response {
        let profileID = request.form["profile_id"] ?? ""
        try await actions.removeDevice(
            request.runtime, profileID: profileID, deviceID: request.form["device_id"] ?? "",
            origin: request.origin(addresses: addresses))
        return ConsoleHTTP.redirect(ConsoleURL("profile", [("id", profileID), ("notice", "device-removed")]))
    }

    /// `POST /console/block` (password required)
    func block(_ request: ConsoleRequest) async throws -> Response {
        let reason = request.form.value("reason")
        let profile = try await actions.setBlocked(
            request.runtime, profileID: request.form["profile_id"] ?? "", blocked: true, reason: reason,
            origin: request.origin(addresses: addresses, reason: reason))
        request.context.logger.notice(
            "profile blocked in the console",
            metadata: ["profile": "\(profile.id)", "operator": "\(request.viewer.operatorID)"])
        return ConsoleHTTP.redirect(ConsoleURL("profile", [("id", profile.id), ("notice", "blocked")]))
    }

    /// `POST /console/unblock`
    func unblock(_ request: ConsoleRequest) async throws -> Response {
        let profile = try await actions.setBlocked(
            request.runtime, profileID: request.form["profile_id"] ?? "", blocked: false, reason: nil,
            origin: request.origin(addresses: addresses))
        return ConsoleHTTP.redirect(ConsoleURL("profile", [("id", profile.id), ("notice", "unblocked")]))
    }

    /// `POST /console/erase` (password and the profile ID typed again)
    func erase(_ request: ConsoleRequest) async throws -> Response {
        let profileID = request.form["profile_id"] ?? ""
        guard request.form.value("confirm") == profileID else {
            throw ConsoleFailure.invalid(
                "confirm", "Type the profile ID exactly to confirm the erasure; nothing was erased.",
                code: "confirmation_mismatch")
        }
        try await actions.erase(request.runtime, profileID: profileID, origin: request.origin(addresses: addresses))
        request.context.logger.notice(
            "profile erased in the console",
            metadata: ["profile": "\(profileID)", "operator": "\(request.viewer.operatorID)"])
        return ConsoleHTTP.redirect(ConsoleURL("profiles", [("notice", "erased")]))
    }

    // MARK: Sessions

    /// `GET /console/sessions`: the most recent sessions, and a session found by its ID.
    func sessions(_ request: ConsoleRequest) async throws -> Response {
        let runtime = request.runtime
        var before: Int64?
        if let cursor = request.query.value("cursor") {
            guard let value = Int64(cursor), value > 0 else {
                throw CoreError.invalidRequest("cursor is not a cursor of this list.")
            }
            before = value
        }
        let created = try await core.store.recentEvents(
            projectID: runtime.id, type: "session.created", profileID: nil, before: before, limit: 51)
        let page = Array(created.prefix(50))
        let next = created.count > 50 ? page.last?.sequence : nil
        let ids = page.compactMap { EndedSession.field("session_id", in: $0.data) }
        let found = try await core.store.sessions(projectID: runtime.id, ids: ids)
        let byID = Dictionary(found.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let now = core.currentTime().seconds
        return self.page(request, title: "Sessions", section: .sessions) { html in
            html.element("p", text: "Sessions created most recently first. Search finds any session by its ID.")
            if page.isEmpty {
                html.element("p", text: "No session was created in the event window.")
                return
            }
            Self.table(
                &html, caption: "Recent sessions",
                headers: ["Session", "Profile", "Kind", "Device key", "Created", "State", "Expires or ended"],
                rows: page
            ) { html, event in
                let id = EndedSession.field("session_id", in: event.data) ?? "?"
                let session = byID[id]
                html.element("td") { $0.element("code", text: id) }
                html.element("td") { html in
                    if let profileID = event.profileID {
                        html.link(ConsoleURL("profile", [("id", profileID)]), text: profileID)
                    } else {
                        html.text("—")
                    }
                }
                html.element("td", text: EndedSession.field("kind", in: event.data) ?? "—")
                html.element("td") { html in
                    if let session { Self.binding(session, in: &html) } else { html.text("—") }
                }
                html.element("td") { ConsoleFormat.time(event.createdAt, in: &$0) }
                let state: String
                if let session {
                    state = session.revokedAt != nil ? "ended" : (session.expiresAt > now ? "live" : "expired")
                } else {
                    state = "ended"
                }
                html.element("td", text: state)
                // An ended session shows when it ended, never a future expiry it will not reach.
                html.element("td") { html in
                    if let revokedAt = session?.revokedAt {
                        html.text("ended ")
                        ConsoleFormat.time(revokedAt, in: &html)
                    } else {
                        ConsoleFormat.time(session?.expiresAt, in: &html)
                    }
                }
            }
            if let next {
                html.element("p", [("class", "pager")]) { html in
                    html.link(
                        ConsoleURL("sessions", [("cursor", String(next))]), [("rel", "next")], text: "Older sessions")
                }
            }
        }
    }
}

/// A `session.ended` event read for the profile page.
struct EndedSession: Sendable {
    var sessionID: String
    var reason: String
    var at: Int64
    var actor: String

    init?(_ event: EventRecord) {
        guard let id = Self.field("session_id", in: event.data) else { return nil }
        sessionID = id
        reason = Self.field("reason", in: event.data) ?? "—"
        at = event.createdAt
        actor = event.actor.kind.rawValue + (event.actor.id.map { " " + $0 } ?? "")
    }

    /// A string member of an event's `data` object.
    static func field(_ name: String, in data: String) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else {
            return nil
        }
        return object[name] as? String
    }
}
