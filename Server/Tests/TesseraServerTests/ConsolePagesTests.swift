import Foundation
import Testing

@testable import TesseraServer

/// The console's pages are pure renderers: given plain values (no server, no store, no request),
/// each writes what those values say, escaped.
@Suite("Console pages rendered from plain values")
struct ConsolePagesTests {
    static let now: Int64 = 1_764_400_000
    static let project = ProjectRecord(
        id: "prj_1", name: "Demo", slug: "demo", settings: ProjectSettings(), createdAt: now, updatedAt: now)

    static func viewer(_ role: OperatorRole) -> ConsoleViewer {
        ConsoleViewer(
            operatorID: "opr_me", email: "me@example.com", role: role, csrf: "csrf-token", projects: [project],
            project: project)
    }

    static func profile(blocked: Bool = false) -> ProfileRecord {
        ProfileRecord(
            id: "usr_0190000000000Abcdefgh12345678", projectID: "prj_1", kind: .identified, externalID: "user-42",
            verified: true, name: "Jane", email: "jane@example.com", createdAt: now - 86_400, updatedAt: now,
            blockedAt: blocked ? now - 60 : nil)
    }

    static func session(_ id: String, revokedAt: Int64? = nil) -> SessionRecord {
        SessionRecord(
            id: id, projectID: "prj_1", profileID: "usr_0190000000000Abcdefgh12345678", installationID: "inst-1",
            kind: .verified, createdAt: now - 600, lastAuthenticatedAt: now - 60, expiresAt: now + 3_600,
            revokedAt: revokedAt)
    }

    static func event(_ type: String, _ data: String, actor: EventActor, reason: String? = nil) -> EventRecord {
        EventRecord(
            id: "evt_1", projectID: "prj_1", sequence: 7, type: type, createdAt: now - 60, actor: actor,
            clientAddress: nil, profileID: "usr_0190000000000Abcdefgh12345678", data: data, reason: reason)
    }

    static func text(_ page: some ConsolePage) -> String { String(decoding: page.content.bytes, as: UTF8.self) }

    static func profilePage(_ role: OperatorRole, blocked: Bool = false, live: [SessionRecord] = []) -> ProfilePage {
        ProfilePage(
            profile: profile(blocked: blocked), live: live, liveCount: live.count, ended: [], devices: [],
            installations: [], aliases: [],
            events: blocked
                ? [
                    event(
                        "profile.blocked", #"{"profile_id":"usr_0190000000000Abcdefgh12345678"}"#,
                        actor: EventActor(kind: .operator, id: "opr_1"), reason: "chargeback <fraud>")
                ] : [],
            operatorEmails: ["opr_1": "ops@example.com"], viewer: viewer(role), refusal: nil)
    }

    @Test("A blocked profile says since when, by whom and why; the reason is escaped")
    func blockedProfile() {
        let page = Self.profilePage(.admin, blocked: true)
        #expect(page.blockedFact.hasPrefix("since "))
        #expect(page.blockedFact.hasSuffix(", by ops@example.com: chargeback <fraud>"))
        let html = Self.text(page)
        #expect(html.contains("by ops@example.com: chargeback &lt;fraud&gt;"))
        #expect(!html.contains("<fraud>"))
        #expect(html.contains("Blocked by ops@example.com: chargeback &lt;fraud&gt;"), "the timeline says it too")
        #expect(html.contains(#"action="unblock""#) && !html.contains(#"action="block""#))
    }

    @Test("A viewer sees the email masked and no action; support may end sessions but not block")
    func profileByRole() {
        let viewer = Self.text(Self.profilePage(.viewer, live: [Self.session("ses_a")]))
        #expect(viewer.contains("j•••@example.com") && !viewer.contains("jane@example.com"))
        #expect(!viewer.contains("actions-title") && !viewer.contains("revoke-session"))
        let support = Self.text(Self.profilePage(.support, live: [Self.session("ses_a")]))
        #expect(support.contains("jane@example.com"))
        #expect(support.contains(#"action="revoke-session""#) && support.contains(#"action="revoke-sessions""#))
        #expect(!support.contains(#"action="block""#) && !support.contains(#"action="erase""#))
        let noSession = Self.text(Self.profilePage(.support))
        #expect(noSession.contains("No live session.") && !noSession.contains("End every session"))
    }

    @Test("Recent sessions: an ended session shows when it ended, never its expiry; a missing one is ended")
    func sessionsPage() {
        let created = ["ses_live", "ses_ended", "ses_gone"].map {
            Self.event(
                "session.created", #"{"session_id":"\#($0)","kind":"verified"}"#,
                actor: EventActor(kind: .sdk, id: nil))
        }
        let page = SessionsPage(
            created: created,
            sessions: [
                "ses_live": Self.session("ses_live"), "ses_ended": Self.session("ses_ended", revokedAt: Self.now - 5),
            ], next: 3, now: Self.now, viewer: Self.viewer(.support))
        let html = Self.text(page)
        let rows = html.components(separatedBy: "<tr>").dropFirst(2)
        #expect(rows.count == 3)
        #expect(rows.first { $0.contains("ses_live") }?.contains("<td>live</td>") == true)
        #expect(rows.first { $0.contains("ses_ended") }?.contains("<td>ended</td>") == true)
        #expect(rows.first { $0.contains("ses_ended") }?.contains("ended <time") == true)
        #expect(rows.first { $0.contains("ses_gone") }?.contains("<td>ended</td>") == true)
        #expect(html.contains(#"href="sessions?cursor=3""#))
        let empty = Self.text(
            SessionsPage(created: [], sessions: [:], next: nil, now: Self.now, viewer: Self.viewer(.viewer)))
        #expect(empty.contains("No session was created in the event window."))
    }

    @Test(
        "Recent sessions show the profile's email (masked for viewers) and external ID, the last client and the end reason"
    )
    func sessionsPageDetails() throws {
        let created = ["ses_live", "ses_ended"].map {
            Self.event(
                "session.created", #"{"session_id":"\#($0)","kind":"verified"}"#, actor: EventActor(kind: .sdk, id: nil)
            )
        }
        func page(_ role: OperatorRole, filter: SessionFilter = SessionFilter()) -> String {
            Self.text(
                SessionsPage(
                    created: created,
                    sessions: [
                        "ses_live": Self.session("ses_live"),
                        "ses_ended": Self.session("ses_ended", revokedAt: Self.now - 5),
                    ],
                    profiles: [Self.profile().id: Self.profile()],
                    clients: ["ses_live": SessionClient(address: "203.0.113.7", userAgent: "Demo/1.0 <iOS>")],
                    endReasons: ["ses_ended": "signed_out"], filter: filter, next: 9, now: Self.now,
                    viewer: Self.viewer(role)))
        }
        let support = page(.support)
        let rows = support.components(separatedBy: "<tr>").dropFirst(2)
        #expect(rows.allSatisfy { $0.contains("jane@example.com") && $0.contains("user-42") })
        let live = rows.first { $0.contains("ses_live") } ?? ""
        #expect(live.contains("<code>203.0.113.7</code>") && live.contains("Demo/1.0 &lt;iOS&gt;"))
        let ended = rows.first { $0.contains("ses_ended") } ?? ""
        #expect(ended.contains("(signed_out)") && ended.contains("<td>—</td>"), "no client recorded: a dash")
        let viewer = page(.viewer)
        #expect(
            viewer.contains("j•••@example.com") && !viewer.contains("jane@example.com") && viewer.contains("user-42"))
        #expect(support.contains(#"id="state""#) && support.contains(#"id="kind""#))
        let filtered = page(.support, filter: SessionFilter(state: .ended, kind: .verified))
        #expect(filtered.contains(#"href="sessions?state=ended&amp;kind=verified&amp;cursor=9""#))
        #expect(filtered.contains(#"<option value="ended" selected>"#))
        let none = Self.text(
            SessionsPage(
                created: [], sessions: [:], filter: SessionFilter(state: .live), next: nil, now: Self.now,
                viewer: Self.viewer(.viewer)))
        #expect(none.contains("No session of these recent ones matches."))
        // The filters parse strictly.
        #expect(
            try SessionFilter.parse(state: "live", kind: "anonymous") == SessionFilter(state: .live, kind: .anonymous))
        #expect(throws: CoreError.self) { try SessionFilter.parse(state: "dead", kind: nil) }
        #expect(throws: CoreError.self) { try SessionFilter.parse(state: nil, kind: "robot") }
    }

    @Test("The overview while the first counts run says so; with figures, the charts are SVG images")
    func overview() {
        let counting = OverviewPage(
            counts: nil, activity: nil, attestMode: .off, attestCounts: nil, troubled: [], states: [:], behind: [:],
            webhookCount: 0, oldSecrets: [], secretCount: 1)
        let html = Self.text(counting)
        #expect(html.components(separatedBy: "Counting… reload the page in a moment.").count - 1 >= 2)
        #expect(html.contains("No webhook is failing, disabled or behind (0 in all)."))
        #expect(!html.contains("<svg"))
        let days = (0..<3).map { offset in
            var day = ActivityDay(day: Self.now / 86_400 - 2 + Int64(offset))
            day.counts.profiles = 10 + offset
            day.counts.identifiedProfiles = 4
            day.counts.anonymousProfiles = 6 + offset
            return day
        }
        let summary = ActivitySummary(days: days, windows: [:])
        let counted = OverviewPage(
            counts: (
                ProjectCounts(
                    profiles: 12, anonymousProfiles: 8, identifiedProfiles: 4, blockedProfiles: 0, liveSessions: 3),
                Self.now
            ),
            activity: (summary, Self.now), attestMode: .off, attestCounts: nil, troubled: [], states: [:],
            behind: [:], webhookCount: 0, oldSecrets: [], secretCount: 1)
        let charts = Self.text(counted)
        #expect(charts.contains(#"<svg class="chart""#) && charts.contains(#"role="img""#))
        #expect(charts.contains("<dd>12</dd>"))
    }

    @Test("Search says what it did not find, escaped, and shortened to 120 characters")
    func search() {
        let page = SearchPage(text: "<b>" + String(repeating: "x", count: 200))
        #expect(page.message.code == "not_found")
        #expect(page.message.text.contains("<b>" + String(repeating: "x", count: 117) + "”"))
        #expect(Self.text(page).contains("Search takes a profile ID (usr_…)"))
    }

    @Test("The profile list: the count past the cap, the CSV link for admins only, the pager")
    func profiles() throws {
        let query = ConsoleForm(fields: [(name: "kind", value: "identified")])
        let filter = try ProfileListQuery.parse(projectID: "prj_1") { query.value($0) }
        let admin = ProfilesPage(
            query: query, filter: filter, count: 1_001, profiles: [Self.profile()], next: "usr_next",
            viewer: Self.viewer(.admin))
        let html = Self.text(admin)
        #expect(html.contains("More than 1,000 profiles match."))
        #expect(html.contains(#"id="profiles-csv""#) && html.contains("profiles.csv?kind=identified"))
        #expect(html.contains(#"href="profiles?kind=identified&amp;cursor=usr_next""#))
        var viewer = admin
        viewer.viewer = Self.viewer(.viewer)
        viewer.next = nil
        let masked = Self.text(viewer)
        #expect(!masked.contains("profiles-csv") && !masked.contains(#"rel="next""#))
        #expect(masked.contains("j•••@example.com"))
    }

    @Test("Keys: a key just made is shown once; a viewer gets no rotation form")
    func keys() {
        let page = KeysPage(
            revealed: ("New publishable key", "pk_live_new"), identitySecrets: [], apiKeys: [], hints: [:],
            signingKeys: [], retiredSigningKeyWindow: 3_600, projectSlug: "demo", now: Self.now,
            viewer: Self.viewer(.owner), refusal: nil)
        let html = Self.text(page)
        #expect(html.contains(#"<code id="revealed-key">pk_live_new</code>"#))
        #expect(html.contains("--project demo --kind secret"))
        var viewer = page
        viewer.revealed = nil
        viewer.viewer = Self.viewer(.viewer)
        let plain = Self.text(viewer)
        #expect(!plain.contains("revealed-key") && !plain.contains("rotate-api-key"))
    }

    @Test("The two key rotation forms come from one helper: each its kind, grace field, default and button")
    func rotateKeyForms() throws {
        let refusal = ConsoleRefusal(
            action: "rotate-api-key", field: "password", code: "operator_password_wrong", message: "Not right",
            status: .forbidden,
            form: ConsoleForm(fields: [
                ("csrf", "csrf-token"), ("kind", "secret"), ("secret_grace_seconds", "3600"), ("password", "wrong"),
            ]))
        let page = KeysPage(
            revealed: nil, identitySecrets: [], apiKeys: [], hints: [:], signingKeys: [],
            retiredSigningKeyWindow: 3_600, projectSlug: "demo", now: Self.now, viewer: Self.viewer(.owner),
            refusal: refusal)
        let html = Self.text(page)
        let forms = html.components(separatedBy: #"<form method="post" action="rotate-api-key""#).dropFirst()
        #expect(forms.count == 2)
        let publishable = try #require(forms.first)
        let secret = try #require(forms.last)
        #expect(publishable.contains(#"name="kind" value="publishable""#))
        #expect(publishable.contains(#"<select id="grace_seconds" name="grace_seconds">"#))
        #expect(publishable.contains(#"<option value="86400" selected>"#), "publishable: 24 hours by default")
        #expect(publishable.contains(#"<button type="submit">Rotate the publishable key</button>"#))
        #expect(!publishable.contains("aria-invalid"), "the refusal was the secret form's")
        #expect(secret.contains(#"name="kind" value="secret""#))
        #expect(secret.contains(#"<select id="secret_grace_seconds" name="secret_grace_seconds">"#))
        #expect(secret.contains(#"<option value="3600" selected>"#), "the refused form keeps the time chosen")
        #expect(secret.contains(#"<button type="submit" class="danger">Rotate the secret key</button>"#))
        #expect(secret.contains("aria-invalid") && !secret.contains(#"value="wrong""#), "no password written back")
        // An admin (not owner) sees only the publishable form.
        var admin = page
        admin.viewer = Self.viewer(.admin)
        #expect(Self.text(admin).components(separatedBy: #"action="rotate-api-key""#).count == 2)
    }

    @Test("The expired enrollment page says how to get a new link; a failure page its title and the way back")
    func failurePages() {
        let expired = ExpiredEnrollmentPage()
        #expect(expired.title == "Enrollment link")
        #expect(Self.text(expired).contains("tessera operators link --email YOUR-EMAIL"))
        let bare = String(
            decoding: expired.barePage(message: .error("enrollment_expired", "Expired.")), as: UTF8.self)
        #expect(bare.contains("<h1>Enrollment link</h1>") && bare.contains("Expired."))

        let notFound = FailurePage(notFound: true, signedIn: true)
        #expect(notFound.title == "Not found")
        #expect(Self.text(notFound).contains(">Back to the overview</a>"))
        let signedOut = FailurePage(notFound: false, signedIn: false)
        #expect(signedOut.title == "Something went wrong")
        #expect(Self.text(signedOut).isEmpty, "no way into the console before sign-in")
    }
}
