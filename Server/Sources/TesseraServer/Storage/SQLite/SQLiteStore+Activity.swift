extension SQLiteStore {
    /// A mark for a profile erased (or merged away) since it was seen is not written: the one writer
    /// runs this after or before the erasure, never across it.
    ///
    /// The marks are written in jobs of ``activityJobSize``: each write job runs in a savepoint whose
    /// journal every statement truncates again, at a cost that grows with the journal, so one job of
    /// a whole flush (thousands of marks on a busy node) cost more than the heartbeats it counted.
    public func recordActivity(_ marks: [ActivityMark], tallies: [ActivityTally]) async throws {
        guard !marks.isEmpty || !tallies.isEmpty else { return }
        var start = marks.startIndex
        while marks.endIndex - start > Self.activityJobSize {
            let chunk = Array(marks[start..<(start + Self.activityJobSize)])
            start += Self.activityJobSize
            try await recordActivityJob(chunk, tallies: [])
        }
        try await recordActivityJob(Array(marks[start...]), tallies: tallies)
    }

    /// The most activity marks one write job holds.
    static let activityJobSize = 128

    private func recordActivityJob(_ marks: [ActivityMark], tallies: [ActivityTally]) async throws {
        _ = try await writer.write { connection in
            for mark in marks {
                try connection.run(
                    """
                    INSERT INTO profile_activity (project_id, day, identified, profile_id, installation_id)
                    SELECT ?, ?, ?, id, ? FROM profiles WHERE id = ? ON CONFLICT DO NOTHING
                    """,
                    [
                        .init(mark.projectID), .init(mark.day), .init(mark.identified), .init(mark.installationID),
                        .init(mark.profileID),
                    ])
            }
            for tally in tallies {
                try connection.run(
                    """
                    INSERT INTO daily_tallies (project_id, day, name, count) VALUES (?, ?, ?, ?)
                    ON CONFLICT (project_id, day, name) DO UPDATE SET count = count + excluded.count
                    """,
                    [.init(tally.projectID), .init(tally.day), .init(tally.name), .init(tally.count)])
            }
        }
    }

    /// Reads the counts migration 18's trigger keeps: at most 90 days of six `active.*` rows and 30
    /// of six `latest.*` rows, whatever the number of profiles.
    public func activitySummary(projectID: String, firstDay: Int64, today: Int64) async throws -> ActivitySummary {
        try readers.read { connection in
            let counts = try connection.query(
                "SELECT day, name, count FROM activity_counts WHERE project_id = ? AND day BETWEEN ? AND ?",
                [
                    .init(projectID), .init(ActivitySQL.firstCountedDay(firstDay: firstDay, today: today)),
                    .init(today),
                ]
            ).map { (day: $0.int(0), name: $0.text(1), count: $0.int(2)) }
            let tallies = try connection.query(
                "SELECT day, name, count FROM daily_tallies WHERE project_id = ? AND day BETWEEN ? AND ?",
                [.init(projectID), .init(firstDay), .init(today)]
            ).map { (day: $0.int(0), name: $0.text(1), count: $0.int(2)) }
            return ActivitySQL.summary(firstDay: firstDay, today: today, counts: counts, tallies: tallies)
        }
    }

    /// Counts one day of activity written before migration 18 (the oldest day still to count of the
    /// first project in `activity_backfill`), in one write job; false when nothing is left to count.
    ///
    /// The day's `active.*` counts are counted again from its rows (replacing what the trigger added
    /// meanwhile), its installations are entered in `activity_installations`, and each subject
    /// active that day has its latest day moved to it when it was earlier, with the `latest.*`
    /// counts moved alike. Days are counted oldest first; once a day is counted, the trigger's
    /// decisions for it are exact (every subject active that day has a latest day no earlier).
    public func backfillActivity() async throws -> Bool {
        try await writer.write { connection in
            guard
                let row = try connection.queryFirst(
                    "SELECT project_id, next_day, last_day FROM activity_backfill ORDER BY project_id LIMIT 1")
            else { return false }
            let projectID = row.text(0)
            let day = row.int(1)
            try connection.run(
                """
                INSERT INTO activity_installations (project_id, day, identified, installation_id)
                SELECT DISTINCT project_id, day, identified, installation_id FROM profile_activity
                WHERE project_id = ? AND day = ? AND installation_id <> '' ON CONFLICT DO NOTHING
                """, [.init(projectID), .init(day)])
            for metric in ActivitySQL.metrics {
                let filter =
                    metric.identified.map { "identified = \($0 ? 1 : 0)" }
                    ?? (metric.subject == "installation_id" ? "installation_id <> ''" : "1")
                let subjects = """
                    WITH s(id) AS (
                        SELECT DISTINCT \(metric.subject) FROM profile_activity
                        WHERE project_id = ?1 AND day = ?2 AND \(filter) AND \(metric.subject) <> '')
                    """
                let bindings: [SQLiteValue] = [.init(projectID), .init(day), .init(metric.name)]
                try connection.run(
                    """
                    \(subjects)
                    INSERT INTO activity_counts (project_id, day, name, count)
                    SELECT ?1, l.day, 'latest.' || ?3, -COUNT(*) FROM activity_latest l JOIN s ON l.subject_id = s.id
                    WHERE l.project_id = ?1 AND l.name = ?3 AND l.day < ?2 GROUP BY l.day
                    ON CONFLICT (project_id, day, name) DO UPDATE SET count = count + excluded.count
                    """, bindings)
                try connection.run(
                    """
                    \(subjects)
                    INSERT INTO activity_counts (project_id, day, name, count)
                    SELECT ?1, ?2, 'latest.' || ?3, COUNT(*) FROM s WHERE NOT EXISTS (
                        SELECT 1 FROM activity_latest l
                        WHERE l.project_id = ?1 AND l.name = ?3 AND l.subject_id = s.id AND l.day >= ?2)
                    ON CONFLICT (project_id, day, name) DO UPDATE SET count = count + excluded.count
                    """, bindings)
                try connection.run(
                    """
                    \(subjects)
                    INSERT INTO activity_latest (project_id, name, subject_id, day) SELECT ?1, ?3, id, ?2 FROM s WHERE 1
                    ON CONFLICT (project_id, name, subject_id) DO UPDATE SET day = excluded.day
                    WHERE excluded.day > activity_latest.day
                    """, bindings)
                try connection.run(
                    """
                    \(subjects)
                    INSERT INTO activity_counts (project_id, day, name, count)
                    SELECT ?1, ?2, 'active.' || ?3, COUNT(*) FROM s WHERE 1
                    ON CONFLICT (project_id, day, name) DO UPDATE SET count = excluded.count
                    """, bindings)
            }
            if day >= row.int(2) {
                try connection.run("DELETE FROM activity_backfill WHERE project_id = ?", [.init(projectID)])
            } else {
                try connection.run(
                    "UPDATE activity_backfill SET next_day = ? WHERE project_id = ?",
                    [.init(day + 1), .init(projectID)])
            }
            return true
        }
    }

    /// Deletes up to `batchSize` rows of each activity table dated before `day`; answers the most
    /// deleted from one table (below `batchSize`: nothing older is left).
    public func deleteActivity(before day: Int64, batchSize: Int) async throws -> Int {
        try await writer.write { connection in
            var most = 0
            for (table, key) in [
                ("profile_activity", "project_id, day, identified, profile_id, installation_id"),
                ("daily_tallies", "project_id, day, name"), ("activity_counts", "project_id, day, name"),
                ("activity_installations", "project_id, day, identified, installation_id"),
                ("activity_latest", "project_id, name, subject_id"),
            ] {
                let deleted = try connection.run(
                    """
                    DELETE FROM \(table) WHERE (\(key)) IN (SELECT \(key) FROM \(table) WHERE day < ? LIMIT ?)
                    """, [.init(day), .init(batchSize)])
                most = max(most, deleted)
            }
            return most
        }
    }

    /// Replaces the erased profile's (and each alias's) ID in its activity rows, and as the subject
    /// of its latest days, with a fresh random ID each: every count stays (they count distinct IDs,
    /// and each stays distinct), and nothing in them points back to the profile. An update fires no
    /// counting trigger.
    static func anonymiseActivity(projectID: String, profileIDs: [String], in connection: SQLiteConnection) throws {
        for profileID in profileIDs {
            let replacement = TimeOrderedID.make(prefix: "era_")
            try connection.run(
                "UPDATE profile_activity SET profile_id = ? WHERE profile_id = ?",
                [.init(replacement), .init(profileID)])
            try connection.run(
                """
                UPDATE activity_latest SET subject_id = ? WHERE project_id = ?
                    AND name IN ('profiles', 'profiles.anonymous', 'profiles.identified') AND subject_id = ?
                """, [.init(replacement), .init(projectID), .init(profileID)])
        }
    }
}
