import Foundation
import Testing

@testable import TesseraServer

/// The console's sessions page (`GET /console/sessions`, D13) through the application: its state and
/// kind filters over more than one batch of events, each session's profile, last client and end
/// reason.
@Suite("Console: the sessions page")
struct ConsoleSessionsTests {
    @Test("Filters by state and kind, past a first batch of events; shows the profile, the client and why it ended")
    func filters() async throws {
        var settings = ProjectSettings()
        settings.rateLimits.anonymousStartsPerMinute = nil
        try await TestEnvironment.withApp(settings: settings) { environment, api in
            try await api.allowUnverifiedIdentify()
            let member = try await api.identify(userID: "member-7")
            let (memberProfile, memberSession) = (try #require(member.profileID), try #require(member.sessionID))
            let ended = try await api.anonymous()
            let (endedProfile, endedSession) = (try #require(ended.profileID), try #require(ended.sessionID))
            // 55 newer anonymous sessions push the member's beyond the first batch of 50 events.
            for _ in 0..<55 { #expect(try await api.anonymous().status == .created) }
            let (support, _) = try await signedInBrowser(environment, api, role: .support)
            try await support.get("/console/profile?id=\(endedProfile)")
            #expect(
                try await support.post("/console/revoke-sessions", [("profile_id", endedProfile)]).status == .seeOther)
            let store = environment.store
            let projectID = environment.project.project.id
            let memberKind = try #require(
                try await store.recentEvents(
                    projectID: projectID, type: "session.created", profileID: memberProfile, before: nil, limit: 1
                ).first.flatMap { EndedSession.field("kind", in: $0.data) })
            #expect(memberKind != "anonymous")
            let reason = try #require(
                try await store.recentEvents(
                    projectID: projectID, type: "session.ended", profileID: endedProfile, before: nil, limit: 1
                ).first.flatMap { EndedSession.field("reason", in: $0.data) })
            let client = try #require(try await store.sessionClients(ids: [memberSession])[memberSession])

            func rows(_ query: String) async throws -> (rows: [String], html: String) {
                let page = try await support.get("/console/sessions\(query)")
                #expect(page.status == .ok, "\(query)")
                return (page.html.components(separatedBy: "<tr>").dropFirst(2).map { $0 }, page.html)
            }
            let all = try await rows("")
            #expect(all.rows.count == 50 && all.html.contains("Older sessions"))
            #expect(!all.html.contains(memberSession), "the member's session is on the second page")

            let byKind = try await rows("?kind=\(memberKind)")
            #expect(byKind.rows.count == 1)
            let row = try #require(byKind.rows.first)
            #expect(row.contains(memberSession) && row.contains(memberProfile) && row.contains("member-7"))
            #expect(row.contains("<code>\(client.address)</code>"))
            #expect(row.contains("<td>live</td>"))

            let endedRows = try await rows("?state=ended")
            #expect(endedRows.rows.count == 1)
            #expect(endedRows.rows.first?.contains(endedSession) == true)
            #expect(endedRows.rows.first?.contains("(\(reason))") == true)
            #expect(!endedRows.html.contains("Older sessions"), "every event read: no further page")

            let live = try await rows("?state=live&kind=anonymous")
            #expect(live.rows.count == 50 && !live.html.contains(endedSession) && !live.html.contains(memberSession))
            #expect(live.html.contains("state=live&amp;kind=anonymous&amp;cursor="))
            let cursor = try #require(ConsoleBrowser.Page.first(#"kind=anonymous&amp;cursor=([0-9]+)""#, in: live.html))
            let rest = try await rows("?state=live&kind=anonymous&cursor=\(cursor)")
            #expect(rest.rows.count == 5 && !rest.html.contains(endedSession))

            for bad in ["?state=zombie", "?kind=robot", "?state="] {
                let reply = try await support.get("/console/sessions\(bad)")
                #expect(reply.status == (bad == "?state=" ? .ok : .badRequest), "\(bad)")
            }
        }
    }
}
