import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

extension StoreConformanceTests {
    /// Starts an anonymous session on a new installation; answers its context.
    private func start(_ store: any TesseraStore, projectID: String, now: Int64) async throws -> SessionContext {
        try await store.startAnonymousSession(
            AnonymousStart(
                projectID: projectID, installationID: UUID().uuidString.lowercased(),
                installationSecretHash: OpaqueToken.sha256(OpaqueToken.installationSecret()),
                newProfileID: OpaqueToken.identifier(prefix: "usr_"),
                newSession: SessionRecord(
                    id: OpaqueToken.identifier(prefix: "ses_"), projectID: projectID, profileID: "",
                    installationID: nil, kind: .anonymous, createdAt: now, lastAuthenticatedAt: now,
                    expiresAt: now + 3600),
                sessionTokenHash: OpaqueToken.sha256(OpaqueToken.sessionToken()))
        ).context
    }

    @Test(
        "Activity: a flush larger than one write job writes every mark and its tallies",
        arguments: StoreBackend.allCases)
    func activityLargeFlush(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        let store = environment.store
        let projectID = environment.project.project.id
        let now = environment.clock.seconds
        let today = ActivitySQL.day(of: now)
        var marks: [ActivityMark] = []
        for _ in 0..<(SQLiteStore.activityJobSize * 2 + 7) {
            let context = try await start(store, projectID: projectID, now: now)
            marks.append(
                ActivityMark(
                    projectID: projectID, day: today, profileID: context.profile.id,
                    installationID: context.session.installationID ?? "", identified: false))
        }
        try await store.recordActivity(
            marks, tallies: [ActivityTally(projectID: projectID, day: today, name: "identify.promoted", count: 4)])
        let summary = try await store.activitySummary(projectID: projectID, firstDay: today, today: today)
        let last = try #require(summary.days.last)
        #expect(last.counts.profiles == marks.count)
        #expect(last.tallies["identify.promoted"] == 4)
    }

    @Test(
        "Activity: a mark written twice counts once, windows count distinct profiles and installations, tallies add",
        arguments: StoreBackend.allCases)
    func activityCounts(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        let store = environment.store
        let projectID = environment.project.project.id
        let other = try await environment.makeOtherProject().project.id
        let now = environment.clock.seconds
        let today = ActivitySQL.day(of: now)
        let a = try await start(store, projectID: projectID, now: now)
        let b = try await start(store, projectID: projectID, now: now)
        let c = try await start(store, projectID: other, now: now)
        func mark(_ context: SessionContext, _ day: Int64, identified: Bool = false, installation: String? = nil)
            -> ActivityMark
        {
            ActivityMark(
                projectID: context.session.projectID, day: day, profileID: context.profile.id,
                installationID: installation ?? context.session.installationID ?? "", identified: identified)
        }
        try await store.recordActivity(
            [
                mark(a, today), mark(a, today), mark(b, today), mark(b, today - 3), mark(a, today - 10),
                mark(b, today - 40), mark(c, today),
                // b identified on the same day, on its own installation: counted in both kinds that day.
                mark(b, today, identified: true),
                // A profile active without an installation (identify without a caller session).
                mark(a, today - 3, identified: true, installation: ""),
            ],
            tallies: [
                ActivityTally(projectID: projectID, day: today, name: "identify.promoted", count: 2),
                ActivityTally(projectID: other, day: today, name: "identify.promoted", count: 5),
            ])
        // Written again (another node, or this one after its memory was cleared): nothing changes.
        try await store.recordActivity(
            [mark(a, today), mark(b, today, identified: true)],
            tallies: [ActivityTally(projectID: projectID, day: today, name: "identify.promoted", count: 1)])
        // A mark for a profile that does not exist (erased or merged away since) is not written.
        var ghost = mark(a, today)
        ghost.profileID = "usr_gone"
        try await store.recordActivity([ghost], tallies: [])

        let summary = try await store.activitySummary(projectID: projectID, firstDay: today - 89, today: today)
        #expect(summary.days.count == 90)
        #expect(summary.days.first?.day == today - 89)
        let last = try #require(summary.days.last)
        #expect(last.counts.profiles == 2)
        #expect(last.counts.anonymousProfiles == 2)
        #expect(last.counts.identifiedProfiles == 1)
        #expect(last.counts.installations == 2)
        #expect(last.counts.identifiedInstallations == 1)
        #expect(last.tallies["identify.promoted"] == 3)
        #expect(last.conversions == 3)
        let threeAgo = summary.days[summary.days.count - 4]
        #expect(threeAgo.counts.profiles == 2)
        #expect(threeAgo.counts.installations == 1, "the identified row has no installation")
        #expect(summary.windows[1]?.profiles == 2)
        #expect(summary.windows[7]?.profiles == 2)
        #expect(summary.windows[7]?.identifiedProfiles == 2)
        #expect(summary.windows[30]?.profiles == 2)
        #expect(summary.windows[30]?.installations == 2)
        #expect(summary.days.reduce(0) { $0 + $1.counts.profiles } == 6, "today 2, 3 days ago 2, 10 and 40 days ago 1")
        let summary40 = try await store.activitySummary(projectID: projectID, firstDay: today - 40, today: today - 40)
        #expect(summary40.days.map(\.counts.profiles) == [1])
        let otherSummary = try await store.activitySummary(projectID: other, firstDay: today, today: today)
        #expect(otherSummary.windows[1]?.profiles == 1)
        #expect(otherSummary.days.last?.tallies["identify.promoted"] == 5)

        // Retention: rows, counts and tallies of days before the limit go, in batches.
        #expect(try await store.deleteActivity(before: today - 5, batchSize: 1) == 1)
        var batches = 1
        while try await store.deleteActivity(before: today - 5, batchSize: 3) >= 3 { batches += 1 }
        #expect(batches > 1)
        #expect(try await store.deleteActivity(before: today - 5, batchSize: 10) == 0)
        let kept = try await store.activitySummary(projectID: projectID, firstDay: today - 89, today: today)
        #expect(kept.days.reduce(0) { $0 + $1.counts.profiles } == 4)
    }

    @Test(
        "Activity: erasing a profile replaces its ID in its rows, and every count stays",
        arguments: StoreBackend.allCases)
    func activityErasure(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        let store = environment.store
        let projectID = environment.project.project.id
        let now = environment.clock.seconds
        let today = ActivitySQL.day(of: now)
        let a = try await start(store, projectID: projectID, now: now)
        let b = try await start(store, projectID: projectID, now: now)
        let marks = [(a, today), (a, today - 1), (a, today - 20), (b, today)].map { context, day in
            ActivityMark(
                projectID: projectID, day: day, profileID: context.profile.id,
                installationID: context.session.installationID ?? "", identified: false)
        }
        try await store.recordActivity(marks, tallies: [])
        let before = try await store.activitySummary(projectID: projectID, firstDay: today - 29, today: today)
        #expect(
            try await store.eraseProfile(
                projectID: projectID, profileID: a.profile.id, now: now, origin: .system))
        let after = try await store.activitySummary(projectID: projectID, firstDay: today - 29, today: today)
        #expect(after == before)
        #expect(after.windows[30]?.profiles == 2, "the erased profile's days stay one profile")
        #expect(try await Self.activityProfileIDs(store, projectID: projectID).contains(a.profile.id) == false)
        #expect(try await Self.activityProfileIDs(store, projectID: projectID).contains(b.profile.id))
    }

    @Test(
        "Activity: the counted days and windows equal a recount of random activity written in any order, erased, backfilled",
        arguments: StoreBackend.allCases)
    func activityCountedEqualsRecount(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        let store = environment.store
        let projectID = environment.project.project.id
        let now = environment.clock.seconds
        let today = ActivitySQL.day(of: now)
        var generator = SplitMix64(seed: 25)
        var profiles: [String] = []
        for _ in 0..<24 { profiles.append(try await start(store, projectID: projectID, now: now).profile.id) }
        // Few installations, shared by profiles (a device handed on), and some marks without one.
        let installations = ["", "i1", "i2", "i3", "i4", "i5", "i6"]
        func randomMarks(_ count: Int) -> [ActivityMark] {
            (0..<count).map { _ in
                ActivityMark(
                    projectID: projectID, day: today - Int64.random(in: 0...40, using: &generator),
                    profileID: profiles.randomElement(using: &generator)!,
                    installationID: installations.randomElement(using: &generator)!,
                    identified: Bool.random(using: &generator))
            }
        }
        func expectRecount(_ what: String) async throws {
            let summary = try await store.activitySummary(projectID: projectID, firstDay: today - 89, today: today)
            let rows = try await ActivityRecount.rows(store, projectID: projectID)
            for day in summary.days {
                #expect(day.counts == ActivityRecount.counts(rows, days: day.day...day.day), "\(what): day \(day.day)")
            }
            for window in ActivitySummary.windowDays {
                #expect(
                    summary.windows[window] == ActivityRecount.counts(rows, days: (today - Int64(window) + 1)...today),
                    "\(what): \(window) days")
            }
        }
        // Flushes of random days, later days before earlier ones, repeats included.
        for _ in 0..<12 { try await store.recordActivity(randomMarks(40), tallies: []) }
        try await expectRecount("written")
        #expect(try await store.backfillActivity(chunkRows: 1_000) == false, "nothing written before schema 18")

        // An erasure keeps every count.
        #expect(
            try await store.eraseProfile(
                projectID: projectID, profileID: profiles.removeFirst(), now: now, origin: .system))
        try await expectRecount("erased")

        // The database as schema 17 left it: rows without counts. The backfill counts it a day at a
        // time while new activity is written between its days.
        for sql in [
            "DELETE FROM activity_counts", "DELETE FROM activity_latest", "DELETE FROM activity_installations",
            "INSERT INTO activity_backfill (project_id, next_day, last_day) VALUES ('\(projectID)', \(today - 40), \(today))",
        ] {
            try await HealthTests.run(sql, on: store)
        }
        var days = 0
        while try await store.backfillActivity(chunkRows: 1_000) {
            days += 1
            try await store.recordActivity(randomMarks(5), tallies: [])
        }
        // A day: its rows (a chunk, and another for what was written after it) and its recount.
        #expect((41...(41 * 3)).contains(days), "\(days)")
        try await expectRecount("backfilled")
        for _ in 0..<4 { try await store.recordActivity(randomMarks(40), tallies: []) }
        try await expectRecount("written after the backfill")

        // Again in chunks of 3 rows (a day is several transactions; each reads where the day got to
        // from the database, as after a restart), with new activity written between chunks.
        for sql in [
            "DELETE FROM activity_counts", "DELETE FROM activity_latest", "DELETE FROM activity_installations",
            "INSERT INTO activity_backfill (project_id, next_day, last_day) VALUES ('\(projectID)', \(today - 40), \(today))",
        ] {
            try await HealthTests.run(sql, on: store)
        }
        let rows = try await ActivityRecount.rows(store, projectID: projectID).count
        var chunks = 0
        while try await store.backfillActivity(chunkRows: 3) {
            chunks += 1
            if chunks % 2 == 0 { try await store.recordActivity(randomMarks(2), tallies: []) }
        }
        // A day of r rows takes more than r / 3 transactions (and one for its recount), whatever is written meanwhile.
        #expect(rows > 41 * 6 && chunks >= rows / 3, "\(rows) rows in \(chunks) transactions")
        try await expectRecount("backfilled in chunks")
    }

    @Test(
        "Activity: writers at once on the same profiles, installations and days count each once",
        arguments: StoreBackend.allCases)
    func activityConcurrentWriters(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        let store = environment.store
        let projectID = environment.project.project.id
        let now = environment.clock.seconds
        let today = ActivitySQL.day(of: now)
        let a = try await start(store, projectID: projectID, now: now).profile.id
        let b = try await start(store, projectID: projectID, now: now).profile.id
        // Each write one mark: the same profile on the same day from other installations, and the
        // same installation from both profiles, many at once (on PostgreSQL, separate connections).
        var marks: [ActivityMark] = []
        for round in 0..<8 {
            for (profile, installation) in [(a, "x\(round)"), (a, "y\(round)"), (b, "x\(round)"), (b, "")] {
                for identified in [false, true] {
                    marks.append(
                        ActivityMark(
                            projectID: projectID, day: today - Int64(round % 3), profileID: profile,
                            installationID: installation, identified: identified))
                }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for mark in marks + marks { group.addTask { try await store.recordActivity([mark], tallies: []) } }
            try await group.waitForAll()
        }
        let summary = try await store.activitySummary(projectID: projectID, firstDay: today - 2, today: today)
        let rows = try await ActivityRecount.rows(store, projectID: projectID)
        #expect(rows.count == Set(marks).count)
        for day in summary.days {
            #expect(day.counts == ActivityRecount.counts(rows, days: day.day...day.day), "day \(day.day)")
        }
        #expect(summary.windows[7] == ActivityRecount.counts(rows, days: (today - 6)...today))
        #expect(summary.windows[7]?.profiles == 2)
    }

    /// The profile IDs in a project's activity rows, read raw.
    static func activityProfileIDs(_ store: any TesseraStore, projectID: String) async throws -> Set<String> {
        Set(try await ActivityRecount.rows(store, projectID: projectID).map(\.profileID))
    }
}
