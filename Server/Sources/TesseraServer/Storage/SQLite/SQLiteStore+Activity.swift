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

    public func activitySummary(projectID: String, firstDay: Int64, today: Int64) async throws -> ActivitySummary {
        try readers.read { connection in
            let counts = ActivitySQL.counts(anonymous: "identified = 0", identified: "identified = 1")
            func activityCounts(_ row: SQLiteRow, from index: Int) -> ActivityCounts {
                var counts = ActivityCounts()
                counts.profiles = Int(row.int(index))
                counts.anonymousProfiles = Int(row.int(index + 1))
                counts.identifiedProfiles = Int(row.int(index + 2))
                counts.installations = Int(row.int(index + 3))
                counts.anonymousInstallations = Int(row.int(index + 4))
                counts.identifiedInstallations = Int(row.int(index + 5))
                return counts
            }
            let daily = try connection.query(
                """
                SELECT day, \(counts) FROM profile_activity
                WHERE project_id = ? AND day BETWEEN ? AND ? GROUP BY day
                """,
                [.init(projectID), .init(firstDay), .init(today)]
            ).map { (day: $0.int(0), counts: activityCounts($0, from: 1)) }
            var windows: [Int: ActivityCounts] = [:]
            for window in ActivitySummary.windowDays {
                windows[window] = try connection.queryFirst(
                    "SELECT \(counts) FROM profile_activity WHERE project_id = ? AND day BETWEEN ? AND ?",
                    [.init(projectID), .init(today - Int64(window) + 1), .init(today)]
                ).map { activityCounts($0, from: 0) }
            }
            let tallies = try connection.query(
                "SELECT day, name, count FROM daily_tallies WHERE project_id = ? AND day BETWEEN ? AND ?",
                [.init(projectID), .init(firstDay), .init(today)]
            ).map { (day: $0.int(0), name: $0.text(1), count: $0.int(2)) }
            return ActivitySQL.summary(
                firstDay: firstDay, today: today, daily: daily, windows: windows, tallies: tallies)
        }
    }

    public func deleteActivity(before day: Int64, batchSize: Int) async throws -> Int {
        try await writer.write { connection in
            let rows = try connection.run(
                """
                DELETE FROM profile_activity WHERE (project_id, day, identified, profile_id, installation_id) IN (
                    SELECT project_id, day, identified, profile_id, installation_id FROM profile_activity
                    WHERE day < ? LIMIT ?)
                """, [.init(day), .init(batchSize)])
            return try rows
                + connection.run(
                    """
                    DELETE FROM daily_tallies WHERE (project_id, day, name) IN (
                        SELECT project_id, day, name FROM daily_tallies WHERE day < ? LIMIT ?)
                    """, [.init(day), .init(batchSize)])
        }
    }

    /// Replaces the erased profile's (and its aliases') ID in its activity rows with one fresh random
    /// ID: the counts of past days stay right, and nothing in them points back to the profile.
    static func anonymiseActivity(profileIDs: [String], in connection: SQLiteConnection) throws {
        let marks = Array(repeating: "?", count: profileIDs.count).joined(separator: ", ")
        let replacement = TimeOrderedID.make(prefix: "era_")
        try connection.run(
            """
            INSERT INTO profile_activity (project_id, day, identified, profile_id, installation_id)
            SELECT project_id, day, identified, ?, installation_id FROM profile_activity
            WHERE profile_id IN (\(marks)) ON CONFLICT DO NOTHING
            """, [.init(replacement)] + profileIDs.map { SQLiteValue($0) })
        try connection.run(
            "DELETE FROM profile_activity WHERE profile_id IN (\(marks))", profileIDs.map { SQLiteValue($0) })
    }
}
