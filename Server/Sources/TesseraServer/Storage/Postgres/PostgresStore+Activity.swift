import PostgresNIO

extension PostgresStore {
    public func recordActivity(_ marks: [ActivityMark], tallies: [ActivityTally]) async throws {
        guard !marks.isEmpty || !tallies.isEmpty else { return }
        let logger = logger
        // In profile ID order, and tallies in key order: two nodes writing at once lock the same rows in
        // the same order.
        let marks = marks.sorted { ($0.profileID, $0.projectID, $0.day) < ($1.profileID, $1.projectID, $1.day) }
        let tallies = tallies.sorted { ($0.projectID, $0.day, $0.name) < ($1.projectID, $1.day, $1.name) }
        try await transaction { connection in
            if !marks.isEmpty {
                // Only for a profile that still exists, its row share-locked: an erasure that commits
                // first leaves nothing to insert, one that runs later anonymises what this wrote.
                try await connection.rows(
                    """
                    INSERT INTO profile_activity (project_id, day, identified, profile_id, installation_id)
                    SELECT u.project_id, u.day, u.identified, u.profile_id, u.installation_id
                    FROM unnest(\(marks.map(\.projectID))::text[], \(marks.map(\.day))::bigint[],
                        \(marks.map(\.identified))::boolean[], \(marks.map(\.profileID))::text[],
                        \(marks.map(\.installationID))::text[]) WITH ORDINALITY
                        AS u(project_id, day, identified, profile_id, installation_id, n)
                    JOIN profiles p ON p.id = u.profile_id
                    ORDER BY u.n
                    FOR KEY SHARE OF p
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
            }
            if !tallies.isEmpty {
                try await connection.rows(
                    """
                    INSERT INTO daily_tallies (project_id, day, name, count)
                    SELECT * FROM unnest(\(tallies.map(\.projectID))::text[], \(tallies.map(\.day))::bigint[],
                        \(tallies.map(\.name))::text[], \(tallies.map(\.count))::bigint[])
                    ON CONFLICT (project_id, day, name) DO UPDATE SET count = daily_tallies.count + excluded.count
                    """, logger: logger)
            }
        }
    }

    public func activitySummary(projectID: String, firstDay: Int64, today: Int64) async throws -> ActivitySummary {
        let logger = logger
        let counts = ActivitySQL.counts(anonymous: "NOT identified", identified: "identified")
        return try await statement { client in
            let daily = try await client.rows(
                """
                SELECT day, \(unescaped: counts) FROM profile_activity
                WHERE project_id = \(projectID) AND day BETWEEN \(firstDay) AND \(today) GROUP BY day
                """, logger: logger
            ).map { (day: try $0.int(0), counts: try Self.activityCounts($0, from: 1)) }
            var windows: [Int: ActivityCounts] = [:]
            for window in ActivitySummary.windowDays {
                let from = today - Int64(window) + 1
                windows[window] = try await client.first(
                    """
                    SELECT \(unescaped: counts) FROM profile_activity
                    WHERE project_id = \(projectID) AND day BETWEEN \(from) AND \(today)
                    """, logger: logger
                ).map { try Self.activityCounts($0, from: 0) }
            }
            let tallies = try await client.rows(
                """
                SELECT day, name, count FROM daily_tallies
                WHERE project_id = \(projectID) AND day BETWEEN \(firstDay) AND \(today)
                """, logger: logger
            ).map { (day: try $0.int(0), name: try $0.text(1), count: try $0.int(2)) }
            return ActivitySQL.summary(
                firstDay: firstDay, today: today, daily: daily, windows: windows, tallies: tallies)
        }
    }

    static func activityCounts(_ row: PostgresCells, from index: Int) throws -> ActivityCounts {
        var counts = ActivityCounts()
        counts.profiles = Int(try row.int(index))
        counts.anonymousProfiles = Int(try row.int(index + 1))
        counts.identifiedProfiles = Int(try row.int(index + 2))
        counts.installations = Int(try row.int(index + 3))
        counts.anonymousInstallations = Int(try row.int(index + 4))
        counts.identifiedInstallations = Int(try row.int(index + 5))
        return counts
    }

    public func deleteActivity(before day: Int64, batchSize: Int) async throws -> Int {
        let logger = logger
        let limit = Int64(batchSize)
        return try await statement { client in
            let rows = try await client.rows(
                """
                DELETE FROM profile_activity WHERE ctid IN (
                    SELECT ctid FROM profile_activity WHERE day < \(day) LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                RETURNING 1
                """, logger: logger
            ).count
            return try await rows
                + client.rows(
                    """
                    DELETE FROM daily_tallies WHERE ctid IN (
                        SELECT ctid FROM daily_tallies WHERE day < \(day) LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                    RETURNING 1
                    """, logger: logger
                ).count
        }
    }

    /// Replaces the erased profile's (and its aliases') ID in its activity rows with one fresh random
    /// ID: the counts of past days stay right, and nothing in them points back to the profile.
    static func anonymiseActivity(profileIDs: [String], in connection: PostgresConnection, logger: Logger)
        async throws
    {
        let replacement = TimeOrderedID.make(prefix: "era_")
        try await connection.rows(
            """
            INSERT INTO profile_activity (project_id, day, identified, profile_id, installation_id)
            SELECT project_id, day, identified, \(replacement), installation_id FROM profile_activity
            WHERE profile_id = ANY(\(profileIDs)::text[]) ON CONFLICT DO NOTHING
            """, logger: logger)
        try await connection.rows(
            "DELETE FROM profile_activity WHERE profile_id = ANY(\(profileIDs)::text[])", logger: logger)
    }
}
