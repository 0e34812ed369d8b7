import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import TesseraTokens
import Testing

@testable import TesseraServer

/// Reads a project's activity rows as they are stored and counts them by brute force, to compare
/// with the store's aggregates.
enum ActivityRecount {
    struct Row: Hashable {
        var day: Int64
        var identified: Bool
        var profileID: String
        var installationID: String
    }

    static func rows(_ store: any TesseraStore, projectID: String) async throws -> [Row] {
        switch store {
        case let sqlite as SQLiteStore:
            return try sqlite.readers.read { connection in
                try connection.query(
                    "SELECT day, identified, profile_id, installation_id FROM profile_activity WHERE project_id = ?",
                    [.init(projectID)]
                ).map { Row(day: $0.int(0), identified: $0.bool(1), profileID: $0.text(2), installationID: $0.text(3)) }
            }
        case let postgres as PostgresStore:
            let logger = postgres.logger
            return try await postgres.statement { client in
                try await client.rows(
                    """
                    SELECT day, identified, profile_id, installation_id FROM profile_activity
                    WHERE project_id = \(projectID)
                    """, logger: logger
                ).map {
                    Row(
                        day: try $0.int(0), identified: try $0.bool(1), profileID: try $0.text(2),
                        installationID: try $0.text(3))
                }
            }
        default:
            Issue.record("no rows for \(type(of: store))")
            return []
        }
    }

    /// The counts of the rows whose day is in `days`, with sets.
    static func counts(_ rows: [Row], days: ClosedRange<Int64>) -> ActivityCounts {
        var profiles: Set<String> = []
        var anonymous: Set<String> = []
        var identified: Set<String> = []
        var installations: Set<String> = []
        var anonymousInstallations: Set<String> = []
        var identifiedInstallations: Set<String> = []
        for row in rows where days.contains(row.day) {
            profiles.insert(row.profileID)
            if row.identified { identified.insert(row.profileID) } else { anonymous.insert(row.profileID) }
            guard !row.installationID.isEmpty else { continue }
            installations.insert(row.installationID)
            if row.identified {
                identifiedInstallations.insert(row.installationID)
            } else {
                anonymousInstallations.insert(row.installationID)
            }
        }
        var counts = ActivityCounts()
        counts.profiles = profiles.count
        counts.anonymousProfiles = anonymous.count
        counts.identifiedProfiles = identified.count
        counts.installations = installations.count
        counts.anonymousInstallations = anonymousInstallations.count
        counts.identifiedInstallations = identifiedInstallations.count
        return counts
    }

    /// Fills `profiles` profiles' activity over 90 days ending `today`, in the database itself: each
    /// profile active on about one day in eight, two profiles to an installation, two in five
    /// identified, one in eleven also active anonymous on its identified days, one in seven without
    /// an installation. Not `counted`: as schema 17 wrote them, without the counting trigger.
    static func fill(
        _ store: any TesseraStore, projectID: String, profiles: Int, today: Int64, counted: Bool = true
    ) async throws {
        let rows = """
            SELECT '\(projectID)' AS project_id, \(today) - k AS day, (n % 5 < 2) AS identified, 'p' || n AS profile_id,
                CASE WHEN n % 7 = 0 THEN '' ELSE 'i' || (n / 2) END AS installation_id
            FROM p, d WHERE (n * 2654435761 + k * 40503 + (n / 3) * k) % 1000 < 125
            UNION ALL
            SELECT '\(projectID)', \(today) - k, (1 = 0), 'p' || n, 'i' || (n / 2)
            FROM p, d WHERE n % 11 = 0 AND n % 5 < 2 AND (n * 2654435761 + k * 40503 + (n / 3) * k) % 1000 < 125
            """
        switch store {
        case let sqlite as SQLiteStore:
            try await sqlite.writer.write { connection in
                let trigger = try connection.queryFirst(
                    "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'profile_activity_counts'")
                if !counted { try connection.execute("DROP TRIGGER profile_activity_counts") }
                try connection.execute(
                    """
                    WITH RECURSIVE p(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM p WHERE n + 1 < \(profiles)),
                        d(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM d WHERE k + 1 < 90)
                    INSERT INTO profile_activity (project_id, day, identified, profile_id, installation_id)
                    \(rows)
                    """)
                if !counted, let trigger { try connection.execute(trigger.text(0)) }
            }
        case let postgres as PostgresStore:
            // A day per statement: each row goes through the counting trigger, and one statement
            // must end within the store's operation limit.
            let logger = postgres.logger
            if !counted {
                try await HealthTests.run(
                    "ALTER TABLE profile_activity DISABLE TRIGGER profile_activity_counts", on: store)
            }
            for k in 0..<90 {
                let sql = """
                    WITH p(n) AS (SELECT generate_series(0, \(profiles - 1))::bigint), d(k) AS (SELECT \(k)::bigint)
                    INSERT INTO profile_activity (project_id, day, identified, profile_id, installation_id)
                    \(rows)
                    """
                try await postgres.statement { client in
                    _ = try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect()
                }
            }
            if !counted {
                try await HealthTests.run(
                    "ALTER TABLE profile_activity ENABLE TRIGGER profile_activity_counts", on: store)
            }
        default:
            Issue.record("no fill for \(type(of: store))")
        }
    }
}

@Suite("Active users")
struct ActivityTests {
    /// `TESSERA_ACTIVITY_RECOUNT_PROFILES` (default 20,000) sets the fixture's size; 1,000,000 is
    /// the long form.
    static var recountProfiles: Int {
        ProcessInfo.processInfo.environment["TESSERA_ACTIVITY_RECOUNT_PROFILES"].flatMap(Int.init) ?? 20_000
    }

    /// A store for the fixture, its project, today and the fixture's number of profiles (on
    /// PostgreSQL, which fills a day per statement under the store's operation limit, a quarter).
    static func fixture(_ backend: StoreBackend) async throws -> (
        store: any TesseraStore, projectID: String, today: Int64, profiles: Int
    ) {
        let environment = try await TestEnvironment.make(backend: backend)
        return (
            environment.store, environment.project.project.id, ActivitySQL.day(of: environment.clock.seconds),
            backend == .postgres ? recountProfiles / 4 : recountProfiles
        )
    }

    @Test(
        "The store's daily figures and 1/7/30-day windows equal a brute-force recount of the raw rows",
        arguments: StoreBackend.allCases)
    func recount(backend: StoreBackend) async throws {
        let (store, projectID, today, profiles) = try await Self.fixture(backend)
        let filling = ContinuousClock.now
        try await ActivityRecount.fill(store, projectID: projectID, profiles: profiles, today: today)
        let filled = ContinuousClock.now - filling
        let counting = ContinuousClock.now
        let summary = try await store.activitySummary(projectID: projectID, firstDay: today - 89, today: today)
        let counted = ContinuousClock.now - counting
        let rows = try await ActivityRecount.rows(store, projectID: projectID)
        #expect(rows.count > profiles * 90 / 10, "the fixture holds about one profile in eight each day")
        print(
            "activity recount (\(backend)): \(profiles) profiles, \(rows.count) rows; fill \(filled), summary \(counted)"
        )
        #expect(summary.days.count == 90)
        for day in summary.days {
            #expect(day.counts == ActivityRecount.counts(rows, days: day.day...day.day), "day \(day.day)")
        }
        for window in ActivitySummary.windowDays {
            #expect(
                summary.windows[window] == ActivityRecount.counts(rows, days: (today - Int64(window) + 1)...today),
                "\(window) days")
        }
        #expect((summary.windows[30]?.anonymousProfiles ?? 0) > 0)
        #expect((summary.windows[30]?.identifiedProfiles ?? 0) > 0)
    }

    /// `TESSERA_ACTIVITY_BACKFILL_DAYS` (default 90): how many of the fixture's latest days the
    /// backfill counts (the others are not compared); fewer make the 1M form shorter.
    static var backfillDays: Int64 {
        ProcessInfo.processInfo.environment["TESSERA_ACTIVITY_BACKFILL_DAYS"].flatMap(Int64.init) ?? 90
    }

    @Test(
        "The backfill counts a fixture written without counts in bounded transactions, with writes between them, as a recount does",
        arguments: StoreBackend.allCases)
    func backfill(backend: StoreBackend) async throws {
        let (store, projectID, today, profiles) = try await Self.fixture(backend)
        let days = min(max(Self.backfillDays, 1), 90)
        try await ActivityRecount.fill(store, projectID: projectID, profiles: profiles, today: today, counted: false)
        try await HealthTests.run(
            """
            INSERT INTO activity_backfill (project_id, next_day, last_day)
            VALUES ('\(projectID)', \(today - days + 1), \(today))
            """, on: store)
        let chunkRows = ActivityFlushService.defaultBackfillChunkRows
        let clock = ContinuousClock()
        var transactions = 0
        var durations: [Duration] = []
        let started = clock.now
        while true {
            let chunk = clock.now
            guard try await store.backfillActivity(chunkRows: chunkRows) else { break }
            durations.append(clock.now - chunk)
            transactions += 1
            // Heartbeats' activity between chunks: profiles of the fixture on today and on a day
            // still being counted, new to the day or not.
            if transactions % 3 == 0 {
                let n = transactions * 7919 % profiles
                try await HealthTests.run(
                    """
                    INSERT INTO profile_activity (project_id, day, identified, profile_id, installation_id)
                    VALUES ('\(projectID)', \(today), \(backend == .postgres ? "true" : "1"), 'p\(n)', 'i\(n / 2)'),
                        ('\(projectID)', \(today - days / 2), \(backend == .postgres ? "false" : "0"), 'p\(n)', 'x\(n)')
                    ON CONFLICT DO NOTHING
                    """, on: store)
            }
        }
        let all = clock.now - started
        let rows = try await ActivityRecount.rows(store, projectID: projectID)
        durations.sort()
        print(
            "activity backfill (\(backend)): \(profiles) profiles, \(rows.count) rows, \(days) days counted in "
                + "\(transactions) transactions of at most \(chunkRows) rows; longest \(durations.last ?? .zero), "
                + "median \(durations.isEmpty ? .zero : durations[durations.count / 2]), all \(all)")
        let perDay = rows.count / 90
        #expect(
            transactions >= Int(days) * (perDay / chunkRows), "a day bigger than a chunk takes several transactions")
        let summary = try await store.activitySummary(projectID: projectID, firstDay: today - 89, today: today)
        for day in summary.days where day.day > today - days {
            #expect(day.counts == ActivityRecount.counts(rows, days: day.day...day.day), "day \(day.day)")
        }
        for window in ActivitySummary.windowDays where window <= days {
            #expect(
                summary.windows[window] == ActivityRecount.counts(rows, days: (today - Int64(window) + 1)...today),
                "\(window) days")
        }
    }

    @Test("A profile seen many times a day is queued once a day per installation and kind; a flush writes it")
    func recorderWritesOncePerDay() async throws {
        let environment = try await TestEnvironment.make(backend: .sqlite)
        let store = environment.store
        let recorder = ActivityRecorder(store: store)
        let now = environment.clock.seconds
        try await environment.withApp { api in
            let started = try await api.anonymous()
            let sessionID = try #require(started.sessionID)
            let context = try #require(try await store.sessionContext(sessionID: sessionID))
            for _ in 0..<100 { recorder.saw(context, now: now) }
            #expect(recorder.queued == 1)
            try await recorder.flush()
            #expect(recorder.queued == 0)
            for _ in 0..<100 { recorder.saw(context, now: now + 60) }
            #expect(recorder.queued == 0, "already written today: no write at all")
            recorder.saw(context, now: now + 86_400)
            #expect(recorder.queued == 1, "a new day")
            recorder.tally("identify.created", projectID: context.session.projectID, now: now)
            recorder.tally("identify.created", projectID: context.session.projectID, now: now)
            try await recorder.flush()
            let today = ActivitySQL.day(of: now)
            let summary = try await store.activitySummary(
                projectID: context.session.projectID, firstDay: today, today: today + 1)
            #expect(summary.days.map(\.counts.profiles) == [1, 1])
            #expect(summary.days[0].tallies == ["identify.created": 2])
        }
    }

    @Test("The recorder's memory is bounded: past its capacity it starts afresh, and a repeated write changes nothing")
    func recorderCapacity() async throws {
        let environment = try await TestEnvironment.make(backend: .sqlite)
        let recorder = ActivityRecorder(store: environment.store, capacity: 2)
        let now = environment.clock.seconds
        func context(_ id: String) -> SessionContext {
            SessionContext(
                session: SessionRecord(
                    id: "ses_\(id)", projectID: environment.project.project.id, profileID: "usr_\(id)",
                    installationID: nil, kind: .anonymous, createdAt: now, lastAuthenticatedAt: now, expiresAt: now + 60
                ),
                profile: ProfileRecord(
                    id: "usr_\(id)", projectID: environment.project.project.id, kind: .anonymous, externalID: nil,
                    verified: false, createdAt: now, updatedAt: now))
        }
        recorder.saw(context("a"), now: now)
        recorder.saw(context("b"), now: now)
        recorder.saw(context("c"), now: now)
        #expect(recorder.queued == 2, "the queue is bounded too")
        try await recorder.flush()
        recorder.saw(context("c"), now: now)
        recorder.saw(context("a"), now: now)
        #expect(recorder.queued == 2, "the memory was full: it started afresh")
    }
}

@Suite("Console: active users and App Attest")
struct ActivityConsoleTests {
    @Test("The daily chart is an SVG image with a title and a description, one bar per active day, and a table")
    func chart() {
        var days = (100...189).map(ActivityDay.init(day:))
        days[89].counts.profiles = 10
        days[89].counts.identifiedProfiles = 4
        days[89].counts.anonymousProfiles = 7
        days[89].tallies["identify.promoted"] = 2
        days[50].counts.profiles = 5
        days[50].counts.anonymousProfiles = 5
        var html = HTML()
        ActivityChart.dailyActive(days, in: &html)
        ActivityChart.conversion(days, in: &html)
        ActivityChart.table(days, in: &html)
        let text = String(decoding: html.bytes, as: UTF8.self)
        #expect(
            text.contains(#"<svg class="chart" viewBox="0 0 720 180" role="img" aria-labelledby="dau-title dau-desc">"#)
        )
        #expect(text.contains(#"<title id="dau-title">Daily active profiles, last 90 days</title>"#))
        #expect(text.contains("on the last day 10 (4 identified, 7 anonymous)"))
        // Day 89: identified 4 and anonymous-only 6; day 50: anonymous 5; the conversion bar of day 89.
        #expect(text.components(separatedBy: "<rect ").count - 1 == 4)
        #expect(text.contains(#"<rect class="identified""#) && text.contains(#"<rect class="conversion""#))
        #expect(text.contains("<td>1970-07-09</td><td>10</td><td>4</td><td>7</td><td>0</td><td>2</td><td>28.6 %</td>"))
    }

    @Test("The overview has the active-user and App Attest sections; a profile lists its installations")
    func pages() async throws {
        try await TestEnvironment.withApp(backend: .sqlite) { environment, api in
            let (browser, _) = try await signedInBrowser(environment, api, role: .viewer)
            let started = try await api.anonymous()
            let profileID = try #require(started.profileID)
            let overview = try await browser.get("/console/")
            #expect(overview.html.contains(#"<h2 id="active-title">Active users</h2>"#))
            #expect(overview.html.contains(#"<h2 id="attest-title">App Attest</h2>"#))
            #expect(overview.html.contains("Mode: <code>off</code>"))
            let profile = try await browser.get("/console/profile?id=\(profileID)")
            #expect(profile.html.contains(#"<h2 id="installations-title">Installations (1)</h2>"#))
            #expect(profile.html.contains("not checked (mode off)"))
        }
    }
}
