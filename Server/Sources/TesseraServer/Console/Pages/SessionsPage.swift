/// Recent sessions (`GET /console/sessions`): the sessions created most recently first, from their
/// `session.created` events, each with its state now, its profile's email and external ID, its last
/// client and, once ended, why; filtered by state (live, ended) and kind.
struct SessionsPage: ConsolePage {
    /// This page of `session.created` events, newest first.
    var created: [EventRecord]
    /// The sessions those events name, by ID (an erased or purged one is missing).
    var sessions: [String: SessionRecord]
    /// The profiles of those sessions, by ID (an erased one is missing).
    var profiles: [String: ProfileRecord] = [:]
    /// The sessions' last clients, by session ID.
    var clients: [String: SessionClient] = [:]
    /// Why each ended session ended (`session.ended`'s `reason`), by session ID.
    var endReasons: [String: String] = [:]
    /// The filters asked for: `state` (`live`, `ended`) and `kind`.
    var filter = SessionFilter()
    /// The sequence the next page starts before, if any.
    var next: Int64?
    var now: Int64
    var viewer: ConsoleViewer

    var title: String { "Sessions" }
    var section: ConsoleSection? { .sessions }

    func render(_ html: inout HTML) {
        html.element("p", text: "Sessions created most recently first. Search finds any session by its ID.")
        html.element("form", [("method", "get"), ("action", "sessions"), ("class", "filters")]) { html in
            ConsoleParts.select(
                &html, id: "state", label: "State", selected: filter.state?.rawValue,
                options: [("", "Any"), ("live", "Live"), ("ended", "Ended or expired")])
            ConsoleParts.select(
                &html, id: "kind", label: "Kind", selected: filter.kind?.rawValue,
                options: [
                    ("", "Any"), ("anonymous", "Anonymous"), ("verified", "Verified"), ("unverified", "Unverified"),
                ])
            html.element("button", [("type", "submit")], text: "Filter")
        }
        if created.isEmpty {
            html.element(
                "p",
                text: filter.isEmpty
                    ? "No session was created in the event window." : "No session of these recent ones matches.")
        } else {
            table(&html)
        }
        if let next {
            html.element("p", [("class", "pager")]) { html in
                html.link(
                    ConsoleURL("sessions", filter.fields + [("cursor", String(next))]), [("rel", "next")],
                    text: "Older sessions")
            }
        }
    }

    private func table(_ html: inout HTML) {
        ConsoleParts.table(
            &html, caption: "Recent sessions",
            headers: [
                "Session", "Profile", "Kind", "Device key", "Last client", "Created", "State", "Expires or ended",
            ],
            rows: created
        ) { html, event in
            let id = EndedSession.field("session_id", in: event.data) ?? "?"
            let session = sessions[id]
            html.element("td") { $0.element("code", text: id) }
            html.element("td") { html in
                if let profileID = event.profileID {
                    html.link(ConsoleURL("profile", [("id", profileID)]), text: profileID)
                    if let profile = profiles[profileID] {
                        for line in [viewer.shown(email: profile.email), profile.externalID].compactMap({ $0 }) {
                            html.void("br")
                            html.element("span", [("class", "small")], text: line)
                        }
                    }
                } else {
                    html.text("—")
                }
            }
            html.element("td", text: EndedSession.field("kind", in: event.data) ?? "—")
            html.element("td") { html in
                if let session { ConsoleParts.binding(session, in: &html) } else { html.text("—") }
            }
            html.element("td") { ProfilePage.client(clients[id], in: &$0) }
            html.element("td") { ConsoleFormat.time(event.createdAt, in: &$0) }
            html.element("td", text: SessionFilter.state(session, now: now))
            // An ended session shows when it ended and why, never a future expiry it will not reach.
            html.element("td") { html in
                if let revokedAt = session?.revokedAt {
                    html.text("ended ")
                    ConsoleFormat.time(revokedAt, in: &html)
                    if let reason = endReasons[id] { html.text(" (\(reason))") }
                } else {
                    ConsoleFormat.time(session?.expiresAt, in: &html)
                }
            }
        }
    }
}

/// The sessions page's filters: the state now and the kind, each optional.
struct SessionFilter: Sendable, Hashable {
    enum State: String, Sendable { case live, ended }

    var state: State?
    var kind: SessionRecord.Kind?

    var isEmpty: Bool { state == nil && kind == nil }

    /// The filters as query fields, for the pager.
    var fields: [(String, String?)] {
        [("state", state?.rawValue), ("kind", kind?.rawValue)].filter { $0.1 != nil }
    }

    /// Parses `state` and `kind` (nil when absent); `invalid_request` for anything else.
    static func parse(state: String?, kind: String?) throws(CoreError) -> SessionFilter {
        var filter = SessionFilter()
        if let state {
            guard let value = State(rawValue: state) else {
                throw CoreError.invalidRequest("state must be live or ended.")
            }
            filter.state = value
        }
        if let kind {
            guard let value = SessionRecord.Kind(rawValue: kind) else {
                throw CoreError.invalidRequest("kind must be anonymous, verified or unverified.")
            }
            filter.kind = value
        }
        return filter
    }

    /// A session's state now: `live`, `expired` or `ended` (also for a session no longer stored).
    static func state(_ session: SessionRecord?, now: Int64) -> String {
        guard let session, session.revokedAt == nil else { return "ended" }
        return session.expiresAt > now ? "live" : "expired"
    }

    /// Whether the session a `session.created` event names matches the filters.
    func matches(_ event: EventRecord, session: SessionRecord?, now: Int64) -> Bool {
        if let kind, EndedSession.field("kind", in: event.data) != kind.rawValue { return false }
        switch state {
        case nil: return true
        case .live: return Self.state(session, now: now) == "live"
        case .ended: return Self.state(session, now: now) != "live"
        }
    }
}
