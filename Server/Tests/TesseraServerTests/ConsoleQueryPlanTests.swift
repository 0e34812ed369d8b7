import Foundation
import PostgresNIO
import Testing

@testable import TesseraServer

/// No console query reads a whole table: on SQLite no `EXPLAIN QUERY PLAN` line scans profiles,
/// sessions, devices, installations, aliases or events (a `SEARCH` through an index is fine); on
/// PostgreSQL, with sequential scans discouraged, no plan has a `Seq Scan` on them.
@Suite("Console query plans")
struct ConsoleQueryPlanTests {
    static let projectID = "prj_plan"

    /// Every filter of the profile list, alone and combined, with and without a cursor.
    static var profileQueries: [ProfileQuery] {
        var queries: [ProfileQuery] = []
        let filters: [(inout ProfileQuery) -> Void] = [
            { _ in }, { $0.kind = .anonymous }, { $0.kind = .identified }, { $0.verified = true },
            {
                $0.kind = .identified
                $0.verified = false
            }, { $0.email = "a@example.com" },
            {
                $0.email = "a@example.com"
                $0.kind = .identified
            }, { $0.externalID = "ext" },
            {
                $0.externalID = "ext"
                $0.verified = true
            }, { $0.installationID = UUID().uuidString.lowercased() },
            { $0.blocked = true }, { $0.blocked = false },
            {
                $0.blocked = true
                $0.kind = .anonymous
            },
            {
                $0.blocked = false
                $0.verified = false
            }, { $0.search = "ann" },
            {
                $0.search = "Ann"
                $0.kind = .identified
                $0.blocked = false
            },
            {
                $0.search = "a"
                $0.email = "a@example.com"
            }, { $0.oldestFirst = true },
            {
                $0.oldestFirst = true
                $0.search = "b"
            },
        ]
        for filter in filters {
            for cursor in [nil, "usr_0190000000000000000000000000"] {
                var query = ProfileQuery(projectID: projectID, beforeID: cursor, limit: 51)
                filter(&query)
                queries.append(query)
            }
        }
        return queries
    }

    /// The console's newest-first event reads: recent sessions, a profile's events and ended sessions,
    /// and the whole project's.
    static let recentEventFilters: [(String?, String?)] = [
        ("session.created", nil), (nil, "usr_x"), ("session.ended", "usr_x"), (nil, nil),
    ]

    /// Identifiers of every kind `lookupProfile` tells apart.
    static let identifiers = [
        "usr_0190000000000000000000000000", "ses_x", "dev_x", UUID().uuidString.lowercased(), "ext", "a@example.com",
        "A@Example.com",
    ]

    /// The lines that read a whole table: `SCAN` of one of the console's tables (or of the aliases
    /// the statements give them).
    static func sqliteScans(_ plan: [String]) -> [String] {
        let tables: Set<String> = [
            "profiles", "sessions", "devices", "installations", "events", "profile_aliases", "p", "s", "d", "i", "a",
        ]
        return plan.filter { line in
            let words = line.split(separator: " ")
            return words.count >= 2 && words[0] == "SCAN" && tables.contains(String(words[1]))
        }
    }

    @Test("SQLite: no console query scans a table")
    func sqlite() async throws {
        let environment = try await TestEnvironment.make(backend: .sqlite)
        let store = try #require(environment.store as? SQLiteStore)
        var statements: [(String, SQLiteStore.Statement)] = []
        for query in Self.profileQueries {
            statements.append(("profiles \(query)", SQLiteStore.profilesStatement(query)))
        }
        for identifier in Self.identifiers {
            for statement in SQLiteStore.lookupStatements(projectID: Self.projectID, identifier: identifier) {
                statements.append(("lookup \(identifier)", statement))
            }
        }
        statements.append(("aliases", SQLiteStore.aliasesStatement(projectID: Self.projectID, profileID: "usr_x")))
        statements.append(
            ("sessions", SQLiteStore.sessionsStatement(projectID: Self.projectID, ids: ["ses_a", "ses_b"])))
        for query in Self.profileQueries {
            statements.append(("count \(query)", SQLiteStore.countProfilesStatement(query, cap: 1_000)))
            guard ProfileSearch.drives(query) else { continue }
            statements.append(("probe \(query)", SQLiteStore.searchProbeStatement(query)))
        }
        for statement in SQLiteStore.countStatements(projectID: Self.projectID, now: 1) {
            statements.append(("counts", statement))
        }
        let events = EventQuery(projectID: Self.projectID, after: 0, profileID: "usr_x", limit: 50)
        statements.append(("events of a profile", SQLiteStore.eventsStatement(events)))
        for (type, profileID) in Self.recentEventFilters {
            statements.append(
                (
                    "recent events \(type ?? "-") \(profileID ?? "-")",
                    SQLiteStore.recentEventsStatement(
                        projectID: Self.projectID, type: type, profileID: profileID, before: 10, limit: 51)
                ))
        }
        #expect(statements.count > 40)
        // The newest-first reads name their index: the primary key would read every newer event.
        let byProfile = try store.queryPlan(
            SQLiteStore.recentEventsStatement(
                projectID: Self.projectID, type: "session.ended", profileID: "usr_x", before: nil, limit: 51))
        #expect(byProfile.contains { $0.contains("events_profile") }, "\(byProfile)")
        let byType = try store.queryPlan(
            SQLiteStore.recentEventsStatement(
                projectID: Self.projectID, type: "session.created", profileID: nil, before: nil, limit: 51))
        #expect(byType.contains { $0.contains("events_type") }, "\(byType)")
        // A profile's installations (its page): each term of the OR through its own index, not the
        // primary key's range of every installation of the project (no SCAN, yet 6.6 s at 1M).
        let installations = try store.queryPlan(
            SQLiteStore.installationIDsStatement(projectID: Self.projectID, profileID: "usr_x"))
        #expect(
            installations.contains { $0.contains("USING INDEX installations_profile (profile_id=?)") }
                && installations.contains {
                    $0.contains("USING INDEX installations_previous_profile (previous_profile_id=?)")
                }
                && !installations.contains { $0.contains("sqlite_autoindex_installations") }, "\(installations)")
        // The audit log reads an audit index, of the one profile's entries when filtered by profile
        // (the primary key would walk back through every event of the project: 1.2 s at 1M).
        let audits: [(AuditFilter, String)] = [
            (.all, "events_audit (project_id=? AND sequence<?)"),
            (AuditFilter(type: "profile.blocked", actor: .secretKey), "events_audit (project_id=? AND sequence<?)"),
            (AuditFilter(profileID: "usr_x"), "events_audit_profile (project_id=? AND profile_id=? AND sequence<?)"),
            (
                AuditFilter(type: "profile.blocked", actor: .operator("op_x"), profileID: "usr_x", from: 1, until: 9),
                "events_audit_profile (project_id=? AND profile_id=? AND sequence<?)"
            ),
        ]
        for (filter, index) in audits {
            let plan = try store.queryPlan(
                SQLiteStore.auditEventsStatement(projectID: Self.projectID, filter: filter, before: 10, limit: 51))
            #expect(plan == ["SEARCH events USING INDEX \(index)"], "\(filter): \(plan)")
        }
        for (name, statement) in statements {
            let plan = try store.queryPlan(statement)
            #expect(!plan.isEmpty, "\(name)")
            #expect(Self.sqliteScans(plan).isEmpty, "\(name): \(plan)")
        }
        // A dense search walks the primary key's index in the page's order (from the cursor, when there
        // is one), stopping when the page is full: one walk of that index, and no sort.
        for query in Self.profileQueries where ProfileSearch.drives(query) {
            let plan = try store.queryPlan(SQLiteStore.profilesStatement(query, denseSearch: true))
            #expect(
                plan.count == 1
                    && (plan[0].hasPrefix("SCAN profiles USING INDEX sqlite_autoindex_profiles_1")
                        || plan[0].hasPrefix("SEARCH profiles USING INDEX sqlite_autoindex_profiles_1 (id")),
                "\(plan)"
            )
        }
        // The activity retention reads each table's range of old days, never the whole table (it
        // holds the writer): its key's (project_id, day) prefix.
        for statement in SQLiteStore.deleteActivityStatements {
            let plan = try store.queryPlan((statement, [.init(Self.projectID), .init(Int64(1)), .init(Int64(10))]))
            #expect(
                plan.contains { $0.contains("SEARCH") && $0.contains("(project_id=? AND day<?)") }
                    && !plan.contains { $0.hasPrefix("SCAN") }, "\(statement): \(plan)")
        }
        // The check itself sees a scan when there is one.
        #expect(
            !Self.sqliteScans(try store.queryPlan(("SELECT id FROM profiles WHERE avatar_url = ?", [.init("x")])))
                .isEmpty)
    }

    @Test("PostgreSQL: no console query has a Seq Scan", .enabled(if: PostgresTestDatabase.isConfigured))
    func postgres() async throws {
        let environment = try await TestEnvironment.make(backend: .postgres)
        let store = try #require(environment.store as? PostgresStore)
        var statements: [(String, PostgresQuery)] = []
        for query in Self.profileQueries {
            statements.append(("profiles \(query)", PostgresStore.profilesStatement(query)))
        }
        for identifier in Self.identifiers {
            for statement in PostgresStore.lookupStatements(projectID: Self.projectID, identifier: identifier) {
                statements.append(("lookup \(identifier)", statement))
            }
        }
        statements.append(("aliases", PostgresStore.aliasesStatement(projectID: Self.projectID, profileID: "usr_x")))
        statements.append(
            ("sessions", PostgresStore.sessionsStatement(projectID: Self.projectID, ids: ["ses_a", "ses_b"])))
        for query in Self.profileQueries {
            statements.append(("count \(query)", PostgresStore.countProfilesStatement(query, cap: 1_000)))
            guard ProfileSearch.drives(query) else { continue }
            statements.append(("probe \(query)", PostgresStore.searchProbeStatement(query)))
            statements.append(("dense search \(query)", PostgresStore.profilesStatement(query, denseSearch: true)))
        }
        for statement in PostgresStore.countStatements(projectID: Self.projectID, now: 1) {
            statements.append(("counts", statement))
        }
        // The feed's statement for one profile (PostgresStore.events, its profile_id case).
        let (projectID, after, profileID, limit) = (Self.projectID, Int64(0), "usr_x", Int64(50))
        statements.append(
            (
                "events of a profile",
                """
                SELECT \(unescaped: PostgresStore.eventColumns) FROM events WHERE project_id = \(projectID)
                    AND sequence > \(after) AND profile_id = \(profileID)
                ORDER BY sequence LIMIT \(limit)
                """
            ))
        for (type, profileID) in Self.recentEventFilters {
            statements.append(
                (
                    "recent events \(type ?? "-") \(profileID ?? "-")",
                    PostgresStore.recentEventsStatement(
                        projectID: Self.projectID, type: type, profileID: profileID, before: 10, limit: 51)
                ))
        }
        let tables = ["profiles", "sessions", "devices", "installations", "events", "profile_aliases"]
        func scans(_ plan: [String]) -> [String] {
            plan.filter { line in
                tables.contains { line.contains("Seq Scan on \($0) ") || line.hasSuffix("Seq Scan on \($0)") }
            }
        }
        for (name, statement) in statements {
            let plan = try await store.queryPlan(statement)
            #expect(!plan.isEmpty, "\(name)")
            #expect(scans(plan).isEmpty, "\(name): \(plan.joined(separator: "\n"))")
        }
        #expect(!scans(try await store.queryPlan("SELECT id FROM profiles WHERE avatar_url = 'x'")).isEmpty)
        // A profile's installations through its two indexes, not the primary key's range of the project.
        let installations = try await store.queryPlan(
            PostgresStore.installationIDsStatement(projectID: Self.projectID, profileID: "usr_x")
        ).joined(separator: "\n")
        #expect(
            installations.contains("installations_profile") && installations.contains("installations_previous_profile")
                && !installations.contains("installations_pkey"), "\(installations)")
        // The audit log of one profile through its own index.
        for filter in [
            AuditFilter(profileID: "usr_x"),
            AuditFilter(type: "profile.blocked", actor: .operator("op_x"), profileID: "usr_x", from: 1, until: 9),
        ] {
            let plan = try await store.queryPlan(
                PostgresStore.auditEventsStatement(projectID: Self.projectID, filter: filter, before: 10, limit: 51)
            ).joined(separator: "\n")
            #expect(plan.contains("events_audit_profile"), "\(filter): \(plan)")
        }
        // A search reads one range of each folded index (not a whole index with a filter).
        for query in Self.profileQueries where query.search != nil && query.email == nil {
            let plan = try await store.queryPlan(PostgresStore.profilesStatement(query)).joined(separator: "\n")
            for column in ProfileSearch.columns {
                #expect(plan.contains("using profiles_\(column)_folded"), "\(query): \(plan)")
            }
        }
        let email = try await store.queryPlan(
            PostgresStore.profilesStatement(ProfileQuery(projectID: Self.projectID, email: "A@b.c", limit: 51)))
        #expect(email.joined().contains("profiles_email_folded"), "\(email)")
    }
}
