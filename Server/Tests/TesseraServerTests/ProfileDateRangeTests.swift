import Foundation
import PostgresNIO
import TesseraTokens
import Testing

@testable import TesseraServer

/// The profile list's creation range (`created_from`, `created_to`): parsed by ``ProfileListQuery``
/// for the admin API and the console alike, read from the time-ordered profile IDs on the store of
/// the selected backend, without a table scan.
@Suite("Profile list: the creation range")
struct ProfileDateRangeTests {
    /// 2026-11-28, midnight UTC.
    static let day: Int64 = 1_795_824_000

    @Test("Days and RFC 3339 date-times parse; anything else, and an empty range, is invalid_request")
    func parsing() throws {
        #expect(ProfileListQuery.instant("2026-11-28")! == (Self.day, true))
        #expect(ProfileListQuery.instant("2026-11-28T09:30:00Z")! == (Self.day + 34_200, false))
        #expect(ProfileListQuery.instant("2026-11-28t09:30:00.999z")! == (Self.day + 34_200, false))
        #expect(ProfileListQuery.instant("2026-11-28T10:30:00+01:00")! == (Self.day + 34_200, false))
        #expect(ProfileListQuery.instant("2026-11-27T23:30:00-01:00")! == (Self.day + 1_800, false))
        #expect(ProfileListQuery.instant("1970-01-01T00:30:00+01:00")! == (0, false), "no earlier than 1970")
        for bad in [
            "", "today", "2026-11-31", "2026-11-28T24:00:00Z", "2026-11-28T09:30:00", "2026-11-28 09:30:00Z",
            "2026-11-28T09:30Z", "2026-11-28T09:30:00.Z", "2026-11-28T09:30:00+0100", "2026-11-28T09:30:60Z",
            "2026-11-28T09:30:00Z ",
        ] {
            #expect(ProfileListQuery.instant(bad) == nil, "\(bad)")
        }
        func parse(_ parameters: [String: String]) throws(CoreError) -> ProfileQuery {
            try ProfileListQuery.parse(projectID: "prj_x") { parameters[$0] }
        }
        let wholeDay = try parse(["created_from": "2026-11-28", "created_to": "2026-11-28"])
        #expect(wholeDay.createdFrom == Self.day && wholeDay.createdUntil == Self.day + 86_400)
        let instant = try parse(["created_to": "2026-11-28T09:30:00Z"])
        #expect(instant.createdFrom == nil && instant.createdUntil == Self.day + 34_200)
        #expect(
            wholeDay.createdIDRange.low == "usr_" + String(UInt64(Self.day) * 1000, radix: 16).leftPadded(12)
                && wholeDay.createdIDRange.high
                    == "usr_" + String(UInt64(Self.day + 86_400) * 1000, radix: 16).leftPadded(12)
        )
        // Every ID made in the range sorts inside it, and only those.
        for (offset, inside): (Int64, Bool) in [(-1, false), (0, true), (86_399, true), (86_400, false)] {
            let id = TimeOrderedID.make(prefix: "usr_", now: Date(timeIntervalSince1970: Double(Self.day + offset)))
            let range = wholeDay.createdIDRange
            #expect((id >= range.low! && id < range.high!) == inside, "\(offset)")
        }
        for refused in [["created_from": "2026-02-30"], ["created_to": "yesterday"], ["created_from": "2026-1-28"]] {
            #expect(throws: CoreError.self, "\(refused)") { try parse(refused) }
        }
        // A range that ends before it starts is empty, not refused.
        let inverted = try parse(["created_from": "2026-11-28", "created_to": "2026-11-27"])
        #expect(inverted.createdIDRange.low! >= inverted.createdIDRange.high!)
    }

    @Test("Every value the document's pattern allows parses")
    func documentPattern() throws {
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: Any])
        let list = try #require((paths["/v1/admin/profiles"] as? [String: Any])?["get"] as? [String: Any])
        let parameters = try #require(list["parameters"] as? [[String: Any]])
        for name in ["created_from", "created_to"] {
            let schema = try #require(parameters.first { $0["name"] as? String == name }?["schema"] as? [String: Any])
            let pattern = try NSRegularExpression(pattern: try #require(schema["pattern"] as? String))
            for text in [
                "1970-01-01", "2026-11-28", "2026-01-31", "2026-04-30", "9999-12-31", "2026-11-28T09:30:00Z",
                "2026-11-28t09:30:00.123456789z", "1970-01-01T00:00:00+23:59", "9999-12-31T23:59:59-23:59",
                "2026-02-28T00:00:00-00:00",
            ] {
                let range = NSRange(text.startIndex..., in: text)
                #expect(pattern.firstMatch(in: text, range: range) != nil, "\(text) matches")
                #expect(ProfileListQuery.instant(text) != nil, "\(text) parses")
            }
            for text in ["2026-02-30", "2026-04-31", "1969-12-31", "2026-11-28T24:00:00Z", "2026-11-28T09:30:00"] {
                let range = NSRange(text.startIndex..., in: text)
                #expect(pattern.firstMatch(in: text, range: range) == nil, "\(text) does not match")
            }
        }
    }

    /// Profiles created at `offsets` seconds from ``day``, through the store's identify and anonymous
    /// start with IDs of those times; their IDs in the order given.
    private static func seed(_ environment: TestEnvironment, offsets: [Int64]) async throws -> [String] {
        var ids: [String] = []
        let projectID = environment.project.project.id
        for (index, offset) in offsets.enumerated() {
            let created = Self.day + offset
            let id = TimeOrderedID.make(prefix: "usr_", now: Date(timeIntervalSince1970: Double(created)))
            let session = SessionRecord(
                id: OpaqueToken.identifier(prefix: "ses_"), projectID: projectID, profileID: "", installationID: nil,
                kind: index.isMultiple(of: 2) ? .verified : .anonymous, createdAt: created,
                lastAuthenticatedAt: created, expiresAt: created + 3600)
            if index.isMultiple(of: 2) {
                _ = try await environment.store.identify(
                    IdentifyCommand(
                        projectID: projectID, callerSessionID: nil, externalID: "member-\(index)", verified: true,
                        name: nil, avatarURL: nil, email: nil, tokenID: nil, newProfileID: id, newSession: session,
                        sessionTokenHash: OpaqueToken.sha256(OpaqueToken.sessionToken()), now: created))
            } else {
                _ = try await environment.store.startAnonymousSession(
                    AnonymousStart(
                        projectID: projectID, installationID: UUID().uuidString.lowercased(),
                        installationSecretHash: OpaqueToken.sha256("secret"), newProfileID: id, newSession: session,
                        sessionTokenHash: OpaqueToken.sha256(OpaqueToken.sessionToken())))
            }
            ids.append(id)
        }
        return ids
    }

    @Test("The store lists and counts exactly the profiles created in the range, on every read path")
    func store() async throws {
        let environment = try await TestEnvironment.make()
        // The last second of the day before, midnight, noon (twice), the last second, the next midnight.
        let ids = try await Self.seed(environment, offsets: [-1, 0, 43_200, 43_201, 86_399, 86_400])
        let store = environment.store
        func listed(_ parameters: [String: String], limit: Int = 50) async throws -> [String] {
            var query = try ProfileListQuery.parse(projectID: environment.project.project.id) { parameters[$0] }
            query.limit = limit
            let page = try await store.profiles(query).map(\.id)
            if parameters["cursor"] == nil, page.count < limit {
                #expect(try await store.countProfiles(query, cap: 100) == page.count, "\(parameters)")
            }
            return page
        }
        let cases: [([String: String], [String])] = [
            (["created_from": "2026-11-28", "created_to": "2026-11-28"], Array(ids[1...4])),
            (["created_from": "2026-11-28"], Array(ids[1...5])),
            (["created_to": "2026-11-27"], [ids[0]]),
            (["created_to": "2026-11-28T12:00:00Z"], Array(ids[0...1])),
            (["created_from": "2026-11-28T12:00:00Z", "created_to": "2026-11-28T12:00:01Z"], [ids[2]]),
            (["created_from": "2026-11-28T13:00:00+01:00", "created_to": "2026-11-29"], Array(ids[2...5])),
            (["created_from": "2026-11-28", "created_to": "2026-11-28", "kind": "anonymous"], [ids[1], ids[3]]),
            (["created_from": "2026-11-28", "created_to": "2026-11-28", "search": "MEMBER-"], [ids[2], ids[4]]),
            (["created_from": "2026-11-28", "external_id": "member-0"], []),
            (["created_to": "2026-11-28", "external_id": "member-0"], [ids[0]]),
            (["created_from": "2026-11-28", "blocked": "false", "verified": "false"], [ids[1], ids[3], ids[5]]),
            (["created_from": "2026-11-29T00:00:01Z"], []),
        ]
        for (parameters, expected) in cases {
            #expect(try await listed(parameters) == expected.reversed(), "\(parameters)")
            var oldest = parameters
            oldest["order"] = "oldest"
            #expect(try await listed(oldest) == expected, "\(oldest)")
        }
        // Paged by cursor, the range holds on every page.
        var parameters = ["created_from": "2026-11-28", "created_to": "2026-11-28"]
        var pages: [String] = []
        while true {
            let page = try await listed(parameters, limit: 2)
            pages += page
            guard page.count == 2, let last = page.last else { break }
            parameters["cursor"] = last
        }
        #expect(pages == ids[1...4].reversed())
        // A search read both ways (index ranges; a walk of every profile) keeps the same range.
        var search = try ProfileListQuery.parse(projectID: environment.project.project.id) {
            ["search": "member", "created_from": "2026-11-28T00:00:01Z"][$0]
        }
        search.limit = 10
        for dense in [false, true] {
            let found: [ProfileRecord]
            if let sqlite = store as? SQLiteStore {
                found = try await sqlite.profiles(search, denseSearch: dense)
            } else {
                found = try await #require(store as? PostgresStore).profiles(search, denseSearch: dense)
            }
            #expect(found.map(\.id) == [ids[4], ids[2]], "dense \(dense)")
        }
    }

    /// The list's queries with a creation range, alone and with the other filters.
    static var rangeQueries: [ProfileQuery] {
        ConsoleQueryPlanTests.profileQueries.flatMap { query in
            [(Self.day, nil), (nil, Self.day), (Self.day, Self.day + 86_400)].map { from, until in
                var ranged = query
                (ranged.createdFrom, ranged.createdUntil) = (from, until)
                return ranged
            }
        }
    }

    /// Every statement the list, its count and a dense search make of ``rangeQueries``, built by
    /// one backend's statement functions, each with its query.
    static func rangeStatements<Statement>(
        page: (ProfileQuery, Bool) -> Statement, count: (ProfileQuery) -> Statement
    ) -> [(ProfileQuery, Statement)] {
        rangeQueries.flatMap { query in
            [(query, page(query, false)), (query, count(query))]
                + (ProfileSearch.drives(query) ? [(query, page(query, true))] : [])
        }
    }

    @Test("SQLite: a creation range scans no table, and the list reads it as a range of profiles_list")
    func sqlitePlan() async throws {
        let environment = try await TestEnvironment.make(backend: .sqlite)
        let store = try #require(environment.store as? SQLiteStore)
        let statements = Self.rangeStatements(
            page: { SQLiteStore.profilesStatement($0, denseSearch: $1) },
            count: { SQLiteStore.countProfilesStatement($0, cap: 1_000) })
        for (query, statement) in statements {
            let plan = try store.queryPlan(statement)
            #expect(!plan.isEmpty && ConsoleQueryPlanTests.sqliteScans(plan).isEmpty, "\(query): \(plan)")
        }
        var list = ProfileQuery(projectID: ConsoleQueryPlanTests.projectID, limit: 51)
        (list.createdFrom, list.createdUntil) = (Self.day, Self.day + 86_400)
        let plan = try store.queryPlan(SQLiteStore.profilesStatement(list))
        #expect(plan.contains { $0.contains("profiles_list") && $0.contains("id>? AND id<?") }, "\(plan)")
    }

    @Test("PostgreSQL: a creation range has no Seq Scan", .enabled(if: PostgresTestDatabase.isConfigured))
    func postgresPlan() async throws {
        let environment = try await TestEnvironment.make(backend: .postgres)
        let store = try #require(environment.store as? PostgresStore)
        let statements = Self.rangeStatements(
            page: { PostgresStore.profilesStatement($0, denseSearch: $1) },
            count: { PostgresStore.countProfilesStatement($0, cap: 1_000) })
        for (query, statement) in statements {
            let plan = try await store.queryPlan(statement)
            #expect(!plan.isEmpty && !plan.contains { $0.contains("Seq Scan on profiles") }, "\(query): \(plan)")
        }
    }

    @Test("The admin API and the console filter by creation; a bad date is refused with its reason")
    func endpoints() async throws {
        try await TestEnvironment.withApp { environment, api in
            try await api.allowUnverifiedIdentify()
            let profile = try #require(try await api.identify(userID: "dated").profileID)
            // The profile's ID carries the real time it was made (the test clock moves created_at only).
            func listed(_ query: String) async throws -> [String] {
                let reply = try await api.admin(.get, "/v1/admin/profiles?\(query)")
                #expect(reply.status == .ok, "\(query)")
                return (reply.json["profiles"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            }
            #expect(try await listed("created_from=2000-01-01") == [profile])
            #expect(try await listed("created_from=2000-01-01T00:00:00Z&created_to=9999-12-31") == [profile])
            #expect(try await listed("created_from=9999-12-31").isEmpty)
            #expect(try await listed("created_to=2000-01-01").isEmpty)
            #expect(try await listed("created_from=2026-11-28&created_to=2026-11-27").isEmpty)
            for bad in ["created_from=2026-02-30", "created_to=tomorrow", "created_from=2026-11-28T09:30:00"] {
                let reply = try await api.admin(.get, "/v1/admin/profiles?\(bad)")
                #expect(reply.status == .badRequest && reply.errorCode == "invalid_request", "\(bad)")
            }

            let (viewer, _) = try await signedInBrowser(environment, api, role: .viewer)
            let page = try await viewer.get("/console/profiles?created_from=2000-01-01&created_to=9999-12-31")
            #expect(page.status == .ok)
            #expect(page.html.contains(#"id="created_from""#) && page.html.contains(#"value="2000-01-01""#))
            #expect(page.html.contains(#"id="created_to""#) && page.html.contains(#"value="9999-12-31""#))
            #expect(page.html.contains(profile) && page.html.contains("1 profile matches."))
            let none = try await viewer.get("/console/profiles?created_from=9999-12-31")
            #expect(!none.html.contains(profile) && none.html.contains("No profile matches."))
            let refused = try await viewer.get("/console/profiles?created_from=2026-02-30")
            #expect(refused.status == .badRequest)
            #expect(refused.html.contains("created_from must be a day (2026-11-28)"))
        }
    }
}

extension String {
    /// The string with zeros before it up to `width` characters.
    fileprivate func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
