import Foundation

/// A profile (`GET /console/profile?id=`): its facts (who blocked it and why), the actions the
/// operator's role allows, its live and ended sessions, devices, installations with their App
/// Attest verdicts, merged profiles, its timeline in words and its events.
struct ProfilePage: ConsolePage {
    var profile: ProfileRecord
    /// The newest live sessions (at most ``ConsoleController/rowsShown``) and how many there are.
    var live: [SessionRecord]
    var liveCount: Int
    /// Sessions that ended, from their `session.ended` events, newest first.
    var ended: [EndedSession]
    var devices: [DeviceRecord]
    var installations: [(id: String, record: AppAttestRecord?)]
    var aliases: [ProfileAliasRecord]
    /// The profile's latest events, newest first.
    var events: [EventRecord]
    /// The last client (address and user agent) of each listed session that has one, by session ID.
    var clients: [String: SessionClient] = [:]
    /// The emails of the operators who acted on it, by operator ID.
    var operatorEmails: [String: String]
    var viewer: ConsoleViewer
    /// A refused action of this page, re-rendered with its message beside its field.
    var refusal: ConsoleRefusal?

    var title: String { "Profile \(profile.id)" }
    var section: ConsoleSection? { .profiles }

    /// "no", or since when, by whom and why, from its latest `profile.blocked` event (the audit's
    /// own record).
    var blockedFact: String {
        guard let blockedAt = profile.blockedAt else { return "no" }
        var fact = "since " + ConsoleFormat.time(blockedAt)
        if let event = events.first(where: { $0.type == "profile.blocked" }) {
            var who = event.actor.kind.rawValue
            if event.actor.kind == .operator, let id = event.actor.id { who = operatorEmails[id] ?? id }
            fact += ", by \(who)" + (event.reason.map { ": \($0)" } ?? "")
        }
        return fact
    }

    func render(_ html: inout HTML) {
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
            actions(&html)
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
                    [
                        "Session", "Kind", "Device key", "Installation", "Last client", "Created", "Last authenticated",
                        "Expires",
                    ]
                    + (viewer.may(.support) ? ["Action"] : [])
                ConsoleParts.table(&html, caption: nil, headers: headers, rows: live) { html, session in
                    html.element("td", [("id", session.id)]) { $0.element("code", text: session.id) }
                    html.element("td", text: session.kind.rawValue)
                    html.element("td") { ConsoleParts.binding(session, in: &$0) }
                    html.element("td", text: session.installationID ?? "—")
                    html.element("td") { client(session.id, in: &$0) }
                    html.element("td") { ConsoleFormat.time(session.createdAt, in: &$0) }
                    html.element("td") { ConsoleFormat.time(session.lastAuthenticatedAt, in: &$0) }
                    html.element("td") { ConsoleFormat.time(session.expiresAt, in: &$0) }
                    if viewer.may(.support) {
                        html.element("td") { html in
                            ConsoleParts.actionForm(
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
                ConsoleParts.table(
                    &html, caption: nil, headers: ["Session", "Reason", "Ended", "By", "Last client"], rows: ended
                ) {
                    html, session in
                    html.element("td", [("id", session.sessionID)]) { $0.element("code", text: session.sessionID) }
                    html.element("td", text: session.reason)
                    html.element("td") { ConsoleFormat.time(session.at, in: &$0) }
                    html.element("td", text: session.actor)
                    html.element("td") { client(session.sessionID, in: &$0) }
                }
            }
        }
        html.element("section", [("aria-labelledby", "devices-title")]) { html in
            html.element("h2", [("id", "devices-title")], text: "Devices (\(devices.count))")
            if devices.isEmpty {
                html.element("p", text: "No device.")
            } else {
                if devices.count > ConsoleController.rowsShown {
                    html.element("p", text: "The \(ConsoleController.rowsShown) newest of \(devices.count).")
                }
                let headers =
                    ["Device", "Platform", "Environment", "Push token", "Session", "Registered"]
                    + (viewer.may(.support) ? ["Action"] : [])
                let shown = devices.sorted { $0.createdAt > $1.createdAt }.prefix(ConsoleController.rowsShown)
                ConsoleParts.table(&html, caption: nil, headers: headers, rows: Array(shown)) { html, device in
                    html.element("td", [("id", device.id)]) { $0.element("code", text: device.id) }
                    html.element("td", text: device.platform)
                    html.element("td", text: device.environment)
                    html.element("td") { $0.element("code", text: "…" + device.token.suffix(8)) }
                    html.element("td") { $0.element("code", text: device.sessionID) }
                    html.element("td") { ConsoleFormat.time(device.createdAt, in: &$0) }
                    if viewer.may(.support) {
                        html.element("td") { html in
                            ConsoleParts.actionForm(
                                &html, action: "remove-device", csrf: viewer.csrf,
                                fields: [("profile_id", profile.id), ("device_id", device.id)],
                                button: "Remove", label: "Remove device \(device.id)")
                        }
                    }
                }
            }
        }
        Self.installations(installations, in: &html)
        html.element("section", [("aria-labelledby", "aliases-title")]) { html in
            html.element("h2", [("id", "aliases-title")], text: "Merged profiles (aliases)")
            if aliases.isEmpty {
                html.element("p", text: "No profile was merged into this one.")
            } else {
                ConsoleParts.table(&html, caption: nil, headers: ["Profile", "How", "When"], rows: aliases) {
                    html, alias in
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
                ConsoleParts.eventTable(
                    &html, events, caption: "The latest \(events.count), newest first",
                    operatorEmails: operatorEmails)
            }
        }
    }

    /// A session's last client: its address, then its user agent in small type; "—" when unknown
    /// (a session made before the server recorded clients).
    func client(_ sessionID: String, in html: inout HTML) { Self.client(clients[sessionID], in: &html) }

    /// A session's last client (see ``client(_:in:)``), also on the sessions page.
    static func client(_ client: SessionClient?, in html: inout HTML) {
        guard let client else {
            html.text("—")
            return
        }
        html.element("code", text: client.address)
        if let agent = client.userAgent {
            html.void("br")
            html.element("span", [("class", "small")], text: agent)
        }
    }

    /// The support and admin actions of a profile.
    private func actions(_ html: inout HTML) {
        let hasSessions = !live.isEmpty
        html.element("section", [("aria-labelledby", "actions-title"), ("class", "actions")]) { html in
            html.element("h2", [("id", "actions-title")], text: "Actions")
            if hasSessions {
                ConsoleParts.actionForm(
                    &html, action: "revoke-sessions", csrf: viewer.csrf, fields: [("profile_id", profile.id)],
                    button: "End every session", label: nil)
            }
            guard viewer.may(.admin) else { return }
            if profile.blocked {
                ConsoleParts.actionForm(
                    &html, action: "unblock", csrf: viewer.csrf, fields: [("profile_id", profile.id)],
                    button: "Unblock", label: nil)
            } else {
                let blocking = refusal?.matching("block", [("profile_id", profile.id)])
                html.element("form", [("method", "post"), ("action", "block"), ("class", "inline-form")]) { html in
                    html.hidden("csrf", viewer.csrf)
                    html.hidden("profile_id", profile.id)
                    ConsoleParts.field(
                        &html, id: "reason", label: "Reason for blocking", type: "text", required: false,
                        refusal: blocking)
                    ConsoleParts.field(
                        &html, id: "password", label: "Your password", type: "password",
                        autocomplete: "current-password", refusal: blocking)
                    html.element("button", [("type", "submit"), ("class", "danger")], text: "Block")
                }
            }
            html.element("form", [("method", "post"), ("action", "erase"), ("class", "inline-form")]) { html in
                html.hidden("csrf", viewer.csrf)
                html.hidden("profile_id", profile.id)
                let erasing = refusal?.matching("erase", [("profile_id", profile.id)])
                ConsoleParts.input(
                    &html, id: "confirm", name: "confirm",
                    label: "Type the profile ID (\(profile.id)) to erase it and its personal data", type: "text",
                    autocomplete: "off", extra: [("data-must-equal", profile.id)], refusal: erasing)
                ConsoleParts.input(
                    &html, id: "erase-password", name: "password", label: "Your password", type: "password",
                    autocomplete: "current-password", refusal: erasing)
                html.element("button", [("type", "submit"), ("class", "danger")], text: "Erase profile")
            }
        }
    }
}

extension ProfilePage {
    /// A profile's installations (at most 100, oldest first), each with its App Attest verdict, what
    /// `enforce` would have done with its latest start or identify, and its attested key.
    static func installations(_ installations: [(id: String, record: AppAttestRecord?)], in html: inout HTML) {
        html.element("section", [("aria-labelledby", "installations-title")]) { html in
            html.element("h2", [("id", "installations-title")], text: "Installations (\(installations.count))")
            guard !installations.isEmpty else {
                html.element("p", text: "No installation.")
                return
            }
            ConsoleParts.table(
                &html, caption: "App Attest verdict of each installation's latest start or identify",
                headers: ["Installation", "App Attest", "Enforce would", "Key", "Checked"], rows: installations
            ) { html, installation in
                html.element("td") { $0.element("code", text: installation.id) }
                guard let record = installation.record else {
                    html.element("td", text: "not checked (mode off)")
                    html.element("td", text: "—")
                    html.element("td", text: "—")
                    html.element("td", text: "—")
                    return
                }
                html.element("td", [("class", record.enforceWouldRefuse ? "refused" : nil)], text: record.verdict)
                html.element("td", text: record.enforceWouldRefuse ? "refuse" : "allow")
                html.element("td") { html in
                    if let key = record.key {
                        html.text("\(key.appID), \(key.environment), counter \(key.counter), attested ")
                        ConsoleFormat.time(key.attestedAt, in: &html)
                    } else {
                        html.text("none")
                    }
                }
                html.element("td") { ConsoleFormat.time(record.updatedAt, in: &$0) }
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
