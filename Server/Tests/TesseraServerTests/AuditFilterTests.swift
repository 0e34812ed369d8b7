import Foundation
import Testing

@testable import TesseraServer

/// The audit log's filters (type, actor, profile, days) in the store on the selected backend, on the
/// console's page, and in its CSV export.
@Suite("Audit filters and the console's CSV exports")
struct AuditFilterTests {
    @Test("Filters parse strictly: unknown types, actors, profiles and impossible days are refused")
    func parsing() throws {
        #expect(AuditQuery.day("1970-01-01") == 0)
        #expect(AuditQuery.day("2026-11-28") == 1_795_824_000)
        #expect(AuditQuery.day("2024-02-29") == 1_709_164_800)
        for bad in ["2026-02-29", "2026-13-01", "2026-11-31", "1969-12-31", "26-11-28", "2026-1-28", "today", ""] {
            #expect(AuditQuery.day(bad) == nil, "\(bad)")
        }
        let filter = try AuditQuery.filter(
            type: "profile.blocked", actor: "secret_key", profile: "usr_abc", from: "2026-11-27", to: "2026-11-28")
        #expect(
            filter
                == AuditFilter(
                    type: "profile.blocked", actor: .secretKey, profileID: "usr_abc", from: 1_795_737_600,
                    until: 1_795_910_400))
        #expect(
            try AuditQuery.filter(type: nil, actor: "opr_x1", profile: nil, from: nil, to: nil).actor
                == .operator("opr_x1"))
        let refused: [(String?, String?, String?, String?, String?)] = [
            ("profile.nope", nil, nil, nil, nil), (nil, "sdk", nil, nil, nil), (nil, "opr_'x", nil, nil, nil),
            (nil, nil, "ses_abc", nil, nil), (nil, nil, nil, "2026-11-31", nil), (nil, nil, nil, nil, "x"),
            (nil, nil, nil, "2026-11-29", "2026-11-28"),
        ]
        for (type, actor, profile, from, to) in refused {
            #expect(throws: CoreError.self) {
                try AuditQuery.filter(type: type, actor: actor, profile: profile, from: from, to: to)
            }
        }
    }

    @Test("The store, the page and the CSV list exactly the entries every filter matches")
    func filters() async throws {
        try await TestEnvironment.withApp { environment, api in
            let projectID = environment.project.project.id
            let one = try #require(try await api.anonymous().profileID)
            let two = try #require(try await api.anonymous().profileID)
            // Day 1: the secret key blocks one. Day 3: an operator blocks two, with a reason a spreadsheet
            // would run as a formula; the secret key unblocks one.
            try await api.admin(.post, "/v1/admin/profiles/\(one)/block", body: #"{"reason":"chargeback"}"#)
            let firstDay = String(RFC3339.string(environment.clock.seconds).prefix(10))
            environment.clock.advance(seconds: 2 * 86_400)
            let (console, account) = try await signedInBrowser(environment, api, role: .owner)
            try await console.get("/console/profile?id=\(two)")
            let blocked = try await console.post(
                "/console/block",
                [("profile_id", two), ("reason", "=HYPERLINK(\"http://x\")"), ("password", "correct horse battery")])
            #expect(blocked.status == .seeOther)
            try await api.admin(.post, "/v1/admin/profiles/\(one)/unblock")
            let lastDay = String(RFC3339.string(environment.clock.seconds).prefix(10))

            func listed(_ filter: AuditFilter) async throws -> [String] {
                try await environment.store.auditEvents(projectID: projectID, filter: filter, before: nil, limit: 50)
                    .filter { $0.type.hasPrefix("profile.") }.map { "\($0.type) \($0.profileID ?? "")" }
            }
            #expect(
                try await listed(.all) == [
                    "profile.unblocked \(one)", "profile.blocked \(two)", "profile.blocked \(one)",
                ])
            #expect(
                try await listed(AuditFilter(type: "profile.blocked")) == [
                    "profile.blocked \(two)", "profile.blocked \(one)",
                ])
            #expect(
                try await listed(AuditFilter(actor: .secretKey)) == [
                    "profile.unblocked \(one)", "profile.blocked \(one)",
                ])
            #expect(try await listed(AuditFilter(actor: .operator(account.id))) == ["profile.blocked \(two)"])
            #expect(try await listed(AuditFilter(actor: .operator("opr_someoneelse"))).isEmpty)
            #expect(
                try await listed(AuditFilter(profileID: one)) == ["profile.unblocked \(one)", "profile.blocked \(one)"])
            let dayOne = try AuditQuery.filter(type: nil, actor: nil, profile: nil, from: firstDay, to: firstDay)
            #expect(try await listed(dayOne) == ["profile.blocked \(one)"])
            let fromLast = try AuditQuery.filter(type: nil, actor: nil, profile: nil, from: lastDay, to: nil)
            #expect(try await listed(fromLast) == ["profile.unblocked \(one)", "profile.blocked \(two)"])
            let combined = AuditFilter(type: "profile.blocked", actor: .secretKey, profileID: two)
            #expect(try await listed(combined).isEmpty)

            // The page: the operator's block only, the filters kept in the form and the CSV link.
            let page = try await console.get("/console/audit?type=profile.blocked&actor=\(account.id)")
            #expect(page.status == .ok)
            #expect(page.html.contains(two) && !page.html.contains("profile?id=\(one)"))
            #expect(page.html.contains(#"href="audit.csv?type=profile.blocked&amp;actor=\#(account.id)""#))
            // The Actor column names the operator by email, the ID on hover; the data is readable.
            #expect(page.html.contains(#"<span title="\#(account.id)">\#(account.email)</span>"#))
            #expect(page.html.contains(#"<dl class="data">"#))
            let secretKey = try await console.get("/console/audit?actor=secret_key")
            #expect(secretKey.html.contains("<td>secret_key") && !secretKey.html.contains(#"<span title="opr_"#))
            let refused = try await console.get("/console/audit?from=2026-02-30")
            #expect(refused.status == .badRequest && refused.errorCode == "invalid_request")

            // The CSV: a header, one row per entry, the formula defused, quotes doubled.
            let csv = try await console.get("/console/audit.csv?profile=\(two)")
            #expect(csv.status == .ok)
            #expect(csv.headers[.contentType] == "text/csv; charset=utf-8")
            #expect(csv.headers[.contentDisposition]?.hasPrefix("attachment;") == true)
            let lines = csv.html.split(separator: "\r\n")
            #expect(lines.first == "sequence,type,at,actor,actor_id,actor_email,profile_id,client_address,reason,data")
            // The block and the session it ended.
            #expect(lines.count == 3)
            let block = try #require(lines.first { $0.contains(#""profile.blocked""#) })
            #expect(block.contains(#""\#(account.email)""#))
            #expect(block.contains(#""'=HYPERLINK(""http://x"")""#))
        }
    }

    @Test("The CSV export pages through more entries than one batch, newest first, none twice")
    func manyEntries() async throws {
        try await TestEnvironment.withApp { environment, api in
            let (console, _) = try await signedInBrowser(environment, api, role: .viewer)
            let profile = try #require(try await api.anonymous().profileID)
            for index in 0..<(AuditCSV.batchSize + 5) {
                let path = "/v1/admin/profiles/\(profile)/\(index % 2 == 0 ? "block" : "unblock")"
                #expect(try await api.admin(.post, path).status == .ok)
            }
            let csv = try await console.get("/console/audit.csv?profile=\(profile)")
            let sequences = csv.html.split(separator: "\r\n").dropFirst().map {
                Int64($0.split(separator: ",")[0].dropFirst().dropLast())!
            }
            // The changes and the session the first block ended: every one in the store, once.
            let stored = try await environment.store.auditEvents(
                projectID: environment.project.project.id, filter: AuditFilter(profileID: profile), before: nil,
                limit: 5000)
            #expect(stored.count > AuditCSV.batchSize + 5)
            #expect(sequences == stored.map(\.sequence))
            #expect(sequences == sequences.sorted(by: >))
        }
    }

    @Test("The profile list exports as CSV with its filters, past one batch, for admins only")
    func profilesCSV() async throws {
        var settings = ProjectSettings()
        settings.rateLimits.anonymousStartsPerMinute = nil
        try await TestEnvironment.withApp(settings: settings) { environment, api in
            for _ in 0..<(AuditCSV.batchSize + 3) { #expect(try await api.anonymous().status == .created) }
            try await api.allowUnverifiedIdentify()
            let identified = try #require(try await api.identify(userID: "+15551234567").profileID)
            let (admin, _) = try await signedInBrowser(environment, api, role: .admin)
            let (viewer, _) = try await signedInBrowser(environment, api, role: .viewer)
            let listing = try await admin.get("/console/profiles?kind=identified")
            #expect(listing.html.contains(#"href="profiles.csv?kind=identified""#))
            #expect(!(try await viewer.get("/console/profiles")).html.contains("profiles.csv"))
            #expect(try await viewer.get("/console/profiles.csv").status == .forbidden)

            let only = try await admin.get("/console/profiles.csv?kind=identified")
            #expect(only.status == .ok && only.headers[.contentType] == "text/csv; charset=utf-8")
            let lines = only.html.split(separator: "\r\n")
            #expect(lines.first == "id,kind,external_id,email,name,verified,blocked_at,created_at,updated_at")
            #expect(lines.count == 2)
            #expect(lines.last?.hasPrefix(#""\#(identified)","identified","'+15551234567""#) == true)

            let every = try await admin.get("/console/profiles.csv")
            let ids = every.html.split(separator: "\r\n").dropFirst().map { String($0.split(separator: ",")[0]) }
            #expect(ids.count == AuditCSV.batchSize + 4)
            #expect(Set(ids).count == ids.count)
            #expect(ids == ids.sorted(by: >))
            #expect(try await admin.get("/console/profiles.csv?kind=robot").status == .badRequest)
        }
    }

    @Test("The profile list searches, counts and orders; its export follows the search and the order")
    func profileSearch() async throws {
        var settings = ProjectSettings()
        settings.rateLimits.anonymousStartsPerMinute = nil
        try await TestEnvironment.withApp(settings: settings) { environment, api in
            try await api.allowUnverifiedIdentify()
            var created: [String] = []
            for index in 0..<(AuditCSV.batchSize + 2) {
                let reply = try await api.identify(userID: "Member-\(index)")
                created.append(try #require(reply.profileID))
            }
            let other = try #require(try await api.identify(userID: "someone-else").profileID)
            let (admin, _) = try await signedInBrowser(environment, api, role: .admin)
            let page = try await admin.get("/console/profiles?search=member-1&order=oldest")
            #expect(page.status == .ok)
            #expect(page.html.contains(#"id="search""#) && page.html.contains(#"value="member-1""#))
            let expected = created.enumerated().filter { "Member-\($0.offset)".hasPrefix("Member-1") }.map(\.element)
            #expect(page.html.contains("\(expected.count) profiles match."))
            let shown = expected.prefix(50)
            #expect(shown.allSatisfy { page.html.contains($0) })
            #expect(!page.html.contains(other))
            #expect(page.html.contains("Newer profiles"))
            let all = try await admin.get("/console/profiles")
            #expect(all.html.contains("More than 1,000 profiles.") == (created.count + 1 > 1_000))
            #expect(all.html.contains("\(created.count + 1) profiles.") == (created.count + 1 <= 1_000))
            let none = try await admin.get("/console/profiles?search=nobody")
            #expect(none.html.contains("0 profiles match.") && none.html.contains("No profile matches."))
            #expect(try await admin.get("/console/profiles?order=sideways").status == .badRequest)

            let csv = try await admin.get("/console/profiles.csv?search=MEMBER-&order=oldest")
            let ids = csv.html.split(separator: "\r\n").dropFirst().map {
                String($0.split(separator: ",")[0].dropFirst().dropLast())
            }
            #expect(ids == created, "every member once, oldest first, past one batch")
        }
    }
}
