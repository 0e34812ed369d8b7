/// Recent sessions (`GET /console/sessions`): the sessions created most recently first, from their
/// `session.created` events, each with its state now.
struct SessionsPage: ConsolePage {
    /// This page of `session.created` events, newest first.
    var created: [EventRecord]
    /// The sessions those events name, by ID (an erased or purged one is missing).
    var sessions: [String: SessionRecord]
    /// The sequence the next page starts before, if any.
    var next: Int64?
    var now: Int64

    var title: String { "Sessions" }
    var section: ConsoleSection? { .sessions }

    func render(_ html: inout HTML) {
        html.element("p", text: "Sessions created most recently first. Search finds any session by its ID.")
        if created.isEmpty {
            html.element("p", text: "No session was created in the event window.")
            return
        }
        ConsoleParts.table(
            &html, caption: "Recent sessions",
            headers: ["Session", "Profile", "Kind", "Device key", "Created", "State", "Expires or ended"],
            rows: created
        ) { html, event in
            let id = EndedSession.field("session_id", in: event.data) ?? "?"
            let session = sessions[id]
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
                if let session { ConsoleParts.binding(session, in: &html) } else { html.text("—") }
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
