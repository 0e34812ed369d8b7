import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// The console's admin queries on every backend: the profile list with each filter and its cursor,
/// lookup by any identifier, aliases, sessions by ID, the overview's counts and the audit `reason`.
@Suite("Console queries")
struct ConsoleQueryTests {
    /// The profiles of one project the tests list: anonymous `a` (installation `installation`),
    /// verified `v` (with an email), unverified `u`, blocked anonymous `b`.
    struct Cast {
        var a: String
        var v: String
        var u: String
        var b: String
        var installation: String
        var vSession: Reply

        static func make(_ environment: TestEnvironment, _ client: APIClient) async throws -> Cast {
            let installation = UUID().uuidString.lowercased()
            let a = try #require(try await client.anonymous(installationID: installation).profileID)
            let vReply = try await client.identify(
                token: environment.identityToken(sub: "ext-v", email: "v@example.com"))
            let v = try #require(vReply.profileID)
            #expect(try await client.allowUnverifiedIdentify().status == .ok)
            let u = try #require(try await client.identify(userID: "ext-u").profileID)
            let b = try #require(try await client.anonymous().profileID)
            let block = try await client.admin(.post, "/v1/admin/profiles/\(b)/block", body: #"{"reason":"spam"}"#)
            #expect(block.status == .ok)
            return Cast(a: a, v: v, u: u, b: b, installation: installation, vSession: vReply)
        }
    }

    /// Whether `ids` are newest first: their creation times (the 12 hexadecimal digits after the
    /// prefix) never increase. (IDs of one millisecond sort by the database's collation.)
    private func newestFirst(_ ids: [String]) -> Bool {
        let times = ids.map { $0.dropFirst(4).prefix(12) }
        return zip(times, times.dropFirst()).allSatisfy { $0 >= $1 }
    }

    /// One page of `GET /v1/admin/profiles?QUERY`: the IDs and `next_cursor`.
    private func list(_ client: APIClient, _ query: String) async throws -> (ids: [String], next: String?) {
        let reply = try await client.admin(.get, "/v1/admin/profiles?\(query)")
        #expect(reply.status == .ok, "\(query): \(String(decoding: reply.body, as: UTF8.self))")
        let profiles = try #require(reply.json["profiles"] as? [[String: Any]])
        #expect(reply.json.keys.contains("next_cursor"))
        return (profiles.compactMap { $0["id"] as? String }, reply.json["next_cursor"] as? String)
    }

    @Test("The profile list: each filter, combined filters, newest first, bad values", arguments: StoreBackend.allCases)
    func filters(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        try await environment.withApp { client in
            let cast = try await Cast.make(environment, client)
            let everything = try await list(client, "")
            #expect(Set(everything.ids) == [cast.a, cast.v, cast.u, cast.b])
            #expect(everything.ids.count == 4)
            #expect(newestFirst(everything.ids))
            #expect(everything.next == nil)
            let expectations: [(String, Set<String>)] = [
                ("kind=anonymous", [cast.a, cast.b]), ("kind=identified", [cast.v, cast.u]),
                ("verified=true", [cast.v]), ("verified=false", [cast.a, cast.u, cast.b]),
                ("email=v%40example.com", [cast.v]), ("email=nobody%40example.com", []),
                ("external_id=ext-v", [cast.v]), ("external_id=ext-u", [cast.u]),
                ("installation_id=\(cast.installation)", [cast.a]),
                ("installation_id=\(cast.installation.uppercased())", [cast.a]),
                ("installation_id=\(UUID().uuidString.lowercased())", []),
                ("blocked=true", [cast.b]), ("blocked=false", [cast.a, cast.v, cast.u]),
                ("kind=identified&verified=false", [cast.u]), ("kind=anonymous&blocked=false", [cast.a]),
                ("kind=anonymous&verified=true", []), ("external_id=ext-v&verified=false", []),
                ("email=v%40example.com&kind=anonymous", []), ("blocked=true&kind=anonymous", [cast.b]),
                ("installation_id=\(cast.installation)&blocked=true", []),
            ]
            for (query, expected) in expectations {
                let page = try await list(client, query)
                #expect(Set(page.ids) == expected, "\(query)")
                #expect(newestFirst(page.ids), "\(query): newest first")
                #expect(page.next == nil)
            }
            let otherCursor = Base64URL.encode(Array("ses_abc".utf8))
            for bad in [
                "kind=robot", "verified=yes", "blocked=1", "limit=0", "limit=201", "limit=abc", "limit=",
                "cursor=***", "cursor=\(otherCursor)", "cursor=dXNyX2E=", "installation_id=nope", "email=",
                "external_id=",
            ] {
                let reply = try await client.admin(.get, "/v1/admin/profiles?\(bad)")
                #expect(reply.status == .badRequest, "\(bad)")
                #expect(reply.errorCode == "invalid_request", "\(bad)")
            }
            let counts = try await environment.store.projectCounts(
                projectID: environment.project.project.id, now: environment.clock.seconds)
            #expect(
                counts
                    == ProjectCounts(
                        profiles: 4, anonymousProfiles: 2, identifiedProfiles: 2, blockedProfiles: 1, liveSessions: 3))
            let other = try await environment.makeOtherProject()
            let foreign = try await client.send(.get, "/v1/admin/profiles", bearer: other.secretKey)
            #expect((foreign.json["profiles"] as? [Any])?.isEmpty == true)
        }
    }

    @Test(
        "Paging: every profile once, newest first, next_cursor null on the last page", arguments: StoreBackend.allCases)
    func paging(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        try await environment.withApp { client in
            var created: [String] = []
            for _ in 0..<7 { created.append(try #require(try await client.anonymous().profileID)) }
            created.append(
                try #require(try await client.identify(token: environment.identityToken(sub: "p")).profileID))
            for (filter, expected) in [("", created), ("kind=anonymous&", Array(created.prefix(7)))] {
                let whole = try await list(client, "\(filter)limit=200").ids
                #expect(Set(whole) == Set(expected))
                #expect(whole.count == expected.count)
                #expect(newestFirst(whole))
                for size in [1, 2, 3, 7, 8, 50] {
                    var seen: [String] = []
                    var cursor: String?
                    var pages = 0
                    repeat {
                        let page = try await list(
                            client, "\(filter)limit=\(size)" + (cursor.map { "&cursor=\($0)" } ?? ""))
                        #expect(page.ids.count <= size)
                        seen += page.ids
                        cursor = page.next
                        pages += 1
                    } while cursor != nil && pages < 20
                    #expect(seen == whole, "\(filter) limit \(size): no repeat, no gap")
                    #expect(pages == max(1, (expected.count + size - 1) / size), "\(filter) limit \(size)")
                }
            }
        }
    }

    @Test(
        "Search: a prefix of the email, name or external ID, ASCII letters without regard to case, in either order",
        arguments: StoreBackend.allCases)
    func search(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        try await environment.withApp { client in
            let annReply = try await client.identify(
                token: environment.identityToken(sub: "Alpha-1", name: "Ann Smith", email: "Ann.Smith@Example.com"))
            let ann = try #require(annReply.profileID)
            let anders = try #require(
                try await client.identify(
                    token: environment.identityToken(sub: "beta-2", name: "\u{C5}nders Bob", email: "bob@example.org")
                ).profileID)
            let annex = try #require(
                try await client.identify(
                    token: environment.identityToken(sub: "ann-3", name: "Zed", email: "zed@example.com")
                ).profileID)
            let anonymous = try #require(try await client.anonymous().profileID)
            func encoded(_ text: String) -> String {
                text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            }
            let expectations: [(String, Set<String>)] = [
                ("ann", [ann, annex]), ("ANN", [ann, annex]), ("Ann.S", [ann]), ("ann smith", [ann]),
                ("alpha", [ann]), ("ALPHA-1", [ann]), ("b", [anders]), ("zed@", [annex]), ("example", []),
                // Only ASCII letters are folded, on both backends alike.
                ("\u{C5}nders", [anders]), ("\u{E5}nders", []), ("usr_", []),
            ]
            for (text, expected) in expectations {
                let page = try await list(client, "search=\(encoded(text))")
                #expect(Set(page.ids) == expected, "search \(text)")
                #expect(page.ids.count == expected.count, "search \(text): each profile once")
                #expect(newestFirst(page.ids), "search \(text)")
            }
            #expect(try await list(client, "search=ann&kind=anonymous").ids.isEmpty)
            #expect(try await list(client, "search=ann&verified=true&blocked=false").ids.count == 2)
            #expect(try await list(client, "search=ann&external_id=ann-3").ids == [annex])
            #expect(try await list(client, "email=ANN.SMITH%40EXAMPLE.COM").ids == [ann])
            #expect(try await list(client, "email=ann.smith%40example.com&search=alp").ids == [ann])
            let oldest = try await list(client, "order=oldest").ids
            #expect(oldest == [ann, anders, annex, anonymous])
            #expect(try await list(client, "order=newest").ids == oldest.reversed())
            // Pages of one, in both orders: every match once.
            for order in ["newest", "oldest"] {
                var (seen, cursor, pages) = ([String](), String?.none, 0)
                repeat {
                    let page = try await list(
                        client, "search=ann&order=\(order)&limit=1" + (cursor.map { "&cursor=\($0)" } ?? ""))
                    (seen, cursor, pages) = (seen + page.ids, page.next, pages + 1)
                } while cursor != nil && pages < 5
                #expect(seen == (order == "oldest" ? [ann, annex] : [annex, ann]), "\(order)")
            }
            // The console's search box finds an email in any case, and a push token.
            let device = try await client.registerDevice(
                bearer: annReply.sessionToken, platform: "fcm", token: "push-token-of-ann")
            #expect(device.status == .created)
            for identifier in ["ANN.SMITH@EXAMPLE.COM", "push-token-of-ann"] {
                let reply = try await client.admin(.get, "/v1/admin/lookup?q=\(encoded(identifier))")
                #expect(reply.profileID == ann, "\(identifier)")
            }
            let store = environment.store
            let projectID = environment.project.project.id
            // Both ways of a search (ranges of the folded indexes; a walk of every profile) answer alike.
            for (text, oldestFirst, cursor) in [
                ("ann", false, nil), ("ann", true, nil), ("A", false, annex), ("a", true, ann), ("b", false, nil),
                ("zzz", false, nil), ("\u{C5}", true, nil),
            ] {
                var query = ProfileQuery(projectID: projectID, beforeID: cursor, limit: 2)
                (query.search, query.oldestFirst) = (text, oldestFirst)
                let ranges: [ProfileRecord]
                let walk: [ProfileRecord]
                if let sqlite = store as? SQLiteStore {
                    (ranges, walk) = (
                        try await sqlite.profiles(query, denseSearch: false),
                        try await sqlite.profiles(query, denseSearch: true)
                    )
                } else {
                    let postgres = try #require(store as? PostgresStore)
                    (ranges, walk) = (
                        try await postgres.profiles(query, denseSearch: false),
                        try await postgres.profiles(query, denseSearch: true)
                    )
                }
                #expect(ranges.map(\.id) == walk.map(\.id), "\(text) \(oldestFirst) \(cursor ?? "-")")
                #expect(try await store.profiles(query).map(\.id) == ranges.map(\.id))
            }
            var query = ProfileQuery(projectID: projectID, limit: 50)
            query.search = "ann"
            #expect(try await store.countProfiles(query, cap: 10) == 2)
            #expect(try await store.countProfiles(query, cap: 1) == 2, "counts to cap + 1")
            query.search = nil
            #expect(try await store.countProfiles(query, cap: 10) == 4)
            #expect(try await store.countProfiles(query, cap: 2) == 3)
            // Blocked profiles are read from their own index, the search checked on each.
            let block = try await client.admin(.post, "/v1/admin/profiles/\(annex)/block", body: #"{"reason":"test"}"#)
            #expect(block.status == .ok)
            #expect(try await list(client, "search=ann&blocked=true").ids == [annex])
            #expect(try await list(client, "search=alpha&blocked=true").ids.isEmpty)
            #expect(try await list(client, "search=ann&blocked=false").ids == [ann])
            for bad in ["search=", "search=%01", "order=up", "order="] {
                let reply = try await client.admin(.get, "/v1/admin/profiles?\(bad)")
                #expect(reply.status == .badRequest, "\(bad)")
                #expect(reply.errorCode == "invalid_request", "\(bad)")
            }
        }
    }

    @Test("Lookup: each kind of identifier, and 404", arguments: StoreBackend.allCases)
    func lookup(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        let other = try await environment.makeOtherProject()
        try await environment.withApp { client in
            let cast = try await Cast.make(environment, client)
            // An anonymous profile merged into v: its ID is an alias of v.
            let mergedInstallation = UUID().uuidString.lowercased()
            let anonymous = try await client.anonymous(installationID: mergedInstallation)
            let alias = try #require(anonymous.profileID)
            let merge = try await client.identify(
                token: environment.identityToken(sub: "ext-v"), bearer: anonymous.sessionToken)
            #expect(merge["merge"]["outcome"] as? String == "merged")
            #expect(merge.profileID == cast.v)
            let device = try await client.registerDevice(
                bearer: cast.vSession.sessionToken, platform: "apns", token: "t1")
            let deviceID = try #require(device["device"]["id"] as? String)
            // An ended session still names its profile while it is stored.
            let ended = try #require(merge.sessionID)
            #expect(try await client.admin(.delete, "/v1/admin/sessions/\(ended)").status == .noContent)
            let live = try #require(cast.vSession.sessionID)
            let cases: [(String, String)] = [
                (cast.v, cast.v), (alias, cast.v), (live, cast.v), (ended, cast.v), (deviceID, cast.v),
                (cast.installation, cast.a), (cast.installation.uppercased(), cast.a), ("ext-v", cast.v),
                ("ext-u", cast.u), ("v@example.com", cast.v), (cast.b, cast.b),
            ]
            for (identifier, expected) in cases {
                let reply = try await client.admin(
                    .get,
                    "/v1/admin/lookup?q=\(identifier.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
                )
                #expect(reply.status == .ok, "\(identifier)")
                #expect(reply.profileID == expected, "\(identifier)")
            }
            for missing in ["nobody", "usr_nothing", "ses_nothing", "dev_nothing", UUID().uuidString.lowercased()] {
                let reply = try await client.admin(.get, "/v1/admin/lookup?q=\(missing)")
                #expect(reply.status == .notFound, "\(missing)")
                #expect(reply.errorCode == "not_found")
            }
            let foreign = try await client.send(.get, "/v1/admin/lookup?q=\(cast.v)", bearer: other.secretKey)
            #expect(foreign.status == .notFound)
            for bad in ["", "?q=", "?q=%01"] {
                #expect(try await client.admin(.get, "/v1/admin/lookup\(bad)").errorCode == "invalid_request")
            }
            let sessions = try await environment.store.sessions(
                projectID: environment.project.project.id, ids: [ended, "ses_unknown", live, ended])
            #expect(sessions.map(\.id) == [ended, live])
            #expect(sessions.first?.revokedAt != nil)
            #expect(try await environment.store.sessions(projectID: other.project.id, ids: [live]).isEmpty)
        }
    }

    @Test("Aliases: the profiles merged in, with when and how", arguments: StoreBackend.allCases)
    func aliases(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        try await environment.withApp { client in
            let target = try await client.identify(token: environment.identityToken(sub: "target"))
            let targetID = try #require(target.profileID)
            let empty = try await client.admin(.get, "/v1/admin/profiles/\(targetID)/aliases")
            #expect(empty.status == .ok)
            #expect((empty.json["aliases"] as? [Any])?.isEmpty == true)
            var merged: [String] = []
            for _ in 0..<2 {
                let anonymous = try await client.anonymous()
                merged.append(try #require(anonymous.profileID))
                let reply = try await client.identify(
                    token: environment.identityToken(sub: "target"), bearer: anonymous.sessionToken)
                #expect(reply["merge"]["outcome"] as? String == "merged")
                environment.clock.advance(seconds: 10)
            }
            for name in [targetID, merged[0]] {
                let reply = try await client.admin(.get, "/v1/admin/profiles/\(name)/aliases")
                let aliases = try #require(reply.json["aliases"] as? [[String: Any]])
                #expect(aliases.compactMap { $0["profile_id"] as? String } == merged)
                #expect(aliases.allSatisfy { $0["how"] as? String == "merged" && $0["merged_at"] is String })
                #expect(Set(aliases.compactMap { $0["merged_at"] as? String }).count == 2)
            }
            let records = try await environment.store.aliases(
                projectID: environment.project.project.id, profileID: targetID)
            #expect(records.map(\.profileID) == [targetID, targetID])
            #expect(records[1].createdAt == records[0].createdAt + 10)
            let unknown = try await client.admin(.get, "/v1/admin/profiles/usr_nothing/aliases")
            #expect(unknown.status == .notFound)
        }
    }

    @Test("An operator's reason is stored with its events and shown by the audit log", arguments: StoreBackend.allCases)
    func reason(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        try await environment.withApp { client in
            let user = try await client.identify(token: environment.identityToken(sub: "r"))
            let profileID = try #require(user.profileID)
            let projectID = environment.project.project.id
            let origin = EventOrigin(
                actor: EventActor(kind: .operator, id: "opr_1"), clientAddress: "192.0.2.1", reason: "ticket 42")
            #expect(
                try await environment.store.revokeSessions(
                    projectID: projectID, profileID: profileID, now: environment.clock.seconds, origin: origin) == 1)
            #expect(try await client.admin(.post, "/v1/admin/profiles/\(profileID)/block").status == .ok)
            let audit = try await environment.store.auditEvents(projectID: projectID, before: nil, limit: 10)
            let ended = try #require(audit.first { $0.type == "session.ended" })
            #expect(ended.reason == "ticket 42")
            #expect(ended.actor == EventActor(kind: .operator, id: "opr_1"))
            #expect(audit.first { $0.type == "profile.blocked" }?.reason == nil)
            let feed = try await environment.store.events(
                EventQuery(projectID: projectID, after: 0, profileID: profileID, limit: 50))
            #expect(feed.first { $0.type == "session.ended" }?.reason == "ticket 42")
            let reply = try await client.admin(.get, "/v1/admin/audit")
            let entries = try #require(reply.json["events"] as? [[String: Any]])
            #expect(entries.first { $0["type"] as? String == "session.ended" }?["reason"] as? String == "ticket 42")
            #expect(entries.first { $0["type"] as? String == "profile.blocked" }?["reason"] is NSNull)
        }
    }
}
