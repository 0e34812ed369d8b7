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

    /// Counts the next chunk of the activity written before migration 18: at most `chunkRows` rows
    /// of the oldest day still to count of the first project in `activity_backfill`, in key order
    /// after the last chunk done (`done_*`, migration 19), in one write job; false when nothing is
    /// left to count.
    ///
    /// A chunk enters its rows' installations in `activity_installations` and moves the latest day
    /// of each subject in it to the day when it was earlier, with the `latest.*` counts moved alike:
    /// both are exact on their own (a subject met again, in a later chunk or by the trigger, is
    /// already there), so rows written between chunks are counted by the trigger as usual. The job
    /// that finds no row left counts the day's `active.*` rows again (replacing what the trigger
    /// added meanwhile: its installations from the now complete `activity_installations`) and moves
    /// on to the next day. Days are counted oldest first; once a
    /// day is counted, the trigger's decisions for it are exact.
    public func backfillActivity(chunkRows: Int) async throws -> Bool {
        try await writer.write { connection in
            guard
                let row = try connection.queryFirst(
                    """
                    SELECT project_id, next_day, last_day, done_day, done_identified, done_profile_id,
                        done_installation_id
                    FROM activity_backfill ORDER BY project_id LIMIT 1
                    """)
            else { return false }
            let projectID = row.text(0)
            let day = row.int(1)
            // After the last row done of this day, else before the first (no profile ID is empty).
            let resumes = row.optionalInt(3) == day
            let bindings: [SQLiteValue] = [
                .init(projectID), .init(day), .init(Int64(max(chunkRows, 1))), .null,
                .init(resumes ? row.int(4) : 0), .init(resumes ? row.text(5) : ""), .init(resumes ? row.text(6) : ""),
            ]
            let chunk = """
                WITH c AS (
                    SELECT identified, profile_id, installation_id FROM profile_activity
                    WHERE project_id = ?1 AND day = ?2 AND (identified, profile_id, installation_id) > (?5, ?6, ?7)
                    ORDER BY identified, profile_id, installation_id LIMIT ?3)
                """
            try connection.run(
                """
                \(chunk)
                INSERT INTO activity_installations (project_id, day, identified, installation_id)
                SELECT DISTINCT ?1, ?2, identified, installation_id FROM c WHERE installation_id <> ''
                ON CONFLICT DO NOTHING
                """, bindings)
            for metric in ActivitySQL.metrics {
                let filter = metric.identified.map { "identified = \($0 ? 1 : 0)" } ?? "1"
                let subjects = """
                    \(chunk), s(id) AS (SELECT DISTINCT \(metric.subject) FROM c WHERE \(filter) AND \(metric.subject) <> '')
                    """
                var bindings = bindings
                bindings[3] = .init(metric.name)
                try connection.run(
                    """
                    \(subjects)
                    INSERT INTO activity_counts (project_id, day, name, count)
                    SELECT ?1, l.day, 'latest.' || ?4, -COUNT(*) FROM activity_latest l JOIN s ON l.subject_id = s.id
                    WHERE l.project_id = ?1 AND l.name = ?4 AND l.day < ?2 GROUP BY l.day
                    ON CONFLICT (project_id, day, name) DO UPDATE SET count = count + excluded.count
                    """, bindings)
                try connection.run(
                    """
                    \(subjects)
                    INSERT INTO activity_counts (project_id, day, name, count)
                    SELECT ?1, ?2, 'latest.' || ?4, COUNT(*) FROM s WHERE NOT EXISTS (
                        SELECT 1 FROM activity_latest l
                        WHERE l.project_id = ?1 AND l.name = ?4 AND l.subject_id = s.id AND l.day >= ?2)
                    ON CONFLICT (project_id, day, name) DO UPDATE SET count = count + excluded.count
                    """, bindings)
                try connection.run(
                    """
                    \(subjects)
                    INSERT INTO activity_latest (project_id, name, subject_id, day) SELECT ?1, ?4, id, ?2 FROM s WHERE 1
                    ON CONFLICT (project_id, name, subject_id) DO UPDATE SET day = excluded.day
                    WHERE excluded.day > activity_latest.day
                    """, bindings)
            }
            // The chunk's last row: the day goes on after it. No row: the day's distinct counts next.
            if let last = try connection.queryFirst(
                """
                \(chunk)
                SELECT identified, profile_id, installation_id FROM c
                ORDER BY identified DESC, profile_id DESC, installation_id DESC LIMIT 1
                """, bindings)
            {
                try connection.run(
                    """
                    UPDATE activity_backfill SET done_day = ?, done_identified = ?, done_profile_id = ?,
                        done_installation_id = ?
                    WHERE project_id = ?
                    """, [.init(day), .init(last.int(0)), .init(last.text(1)), .init(last.text(2)), .init(projectID)])
                return true
            }
            for metric in ActivitySQL.metrics {
                let source = metric.subject == "profile_id" ? "profile_activity" : "activity_installations"
                let filter = metric.identified.map { "identified = \($0 ? 1 : 0)" } ?? "identified IN (0, 1)"
                try connection.run(
                    """
                    INSERT INTO activity_counts (project_id, day, name, count)
                    SELECT ?1, ?2, 'active.' || ?3, COUNT(*) FROM (
                        SELECT DISTINCT \(metric.subject) FROM \(source)
                        WHERE project_id = ?1 AND day = ?2 AND \(filter) AND \(metric.subject) <> '') WHERE 1
                    ON CONFLICT (project_id, day, name) DO UPDATE SET count = excluded.count
                    """, [.init(projectID), .init(day), .init(metric.name)])
            }
            if day >= row.int(2) {
                try connection.run("DELETE FROM activity_backfill WHERE project_id = ?", [.init(projectID)])
            } else {
                try connection.run(
                    "UPDATE activity_backfill SET next_day = ?, done_day = NULL WHERE project_id = ?",
                    [.init(day + 1), .init(projectID)])
            }
            return true
        }
    }

    /// Deletes up to `batchSize` rows of each activity table dated before `day`; answers the most
    /// deleted from one table (below `batchSize`: nothing older is left).
    ///
    /// Each table is read by its key's `(project_id, day)` prefix, project by project (and
    /// `activity_latest` by its index on `day`): `day < ?` alone read every row of
    /// `profile_activity` (4 s at 1M profiles, holding the writer, every hour and at each start).
    public func deleteActivity(before day: Int64, batchSize: Int) async throws -> Int {
        try await writer.write { connection in
            let projects = try connection.query(
                "SELECT id FROM projects UNION SELECT DISTINCT project_id FROM activity_counts"
            ).map { $0.text(0) }
            var most = try connection.run(
                """
                DELETE FROM activity_latest WHERE (project_id, name, subject_id) IN (
                    SELECT project_id, name, subject_id FROM activity_latest WHERE day < ? LIMIT ?)
                """, [.init(day), .init(batchSize)])
            for statement in Self.deleteActivityStatements {
                var deleted = 0
                for project in projects where deleted < batchSize {
                    deleted += try connection.run(
                        statement, [.init(project), .init(day), .init(Int64(batchSize - deleted))])
                }
                most = max(most, deleted)
            }
            return most
        }
    }

    /// The retention's deletes of one project's rows before a day (`?1`, `?2`), at most `?3` (their
    /// plans are tested).
    static let deleteActivityStatements: [String] = [
        ("profile_activity", "project_id, day, identified, profile_id, installation_id"),
        ("daily_tallies", "project_id, day, name"), ("activity_counts", "project_id, day, name"),
        ("activity_installations", "project_id, day, identified, installation_id"),
    ].map { table, key in
        """
        DELETE FROM \(table) WHERE (\(key)) IN (
            SELECT \(key) FROM \(table) WHERE project_id = ?1 AND day < ?2 LIMIT ?3)
        """
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
