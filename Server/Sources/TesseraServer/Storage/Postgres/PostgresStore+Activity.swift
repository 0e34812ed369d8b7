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

    /// Reads the counts migration 18's trigger keeps: at most 90 days of six `active.*` rows and 30
    /// of six `latest.*` rows, whatever the number of profiles.
    public func activitySummary(projectID: String, firstDay: Int64, today: Int64) async throws -> ActivitySummary {
        let logger = logger
        let from = ActivitySQL.firstCountedDay(firstDay: firstDay, today: today)
        return try await statement { client in
            let counts = try await client.rows(
                """
                SELECT day, name, count FROM activity_counts
                WHERE project_id = \(projectID) AND day BETWEEN \(from) AND \(today)
                """, logger: logger
            ).map { (day: try $0.int(0), name: try $0.text(1), count: try $0.int(2)) }
            let tallies = try await client.rows(
                """
                SELECT day, name, count FROM daily_tallies
                WHERE project_id = \(projectID) AND day BETWEEN \(firstDay) AND \(today)
                """, logger: logger
            ).map { (day: try $0.int(0), name: try $0.text(1), count: try $0.int(2)) }
            return ActivitySQL.summary(firstDay: firstDay, today: today, counts: counts, tallies: tallies)
        }
    }

    /// Counts one day of activity written before migration 18, as `SQLiteStore.backfillActivity()`
    /// does, in one transaction that first takes `profile_activity` in SHARE ROW EXCLUSIVE mode (no
    /// row is inserted, and no other backfill runs, until it commits), then locks the backfill row
    /// it acts on.
    public func backfillActivity() async throws -> Bool {
        let logger = logger
        return try await transaction { connection in
            try await connection.rows("LOCK TABLE profile_activity IN SHARE ROW EXCLUSIVE MODE", logger: logger)
            guard
                let row = try await connection.first(
                    "SELECT project_id, next_day, last_day FROM activity_backfill ORDER BY project_id LIMIT 1 FOR UPDATE",
                    logger: logger)
            else { return false }
            let projectID = try row.text(0)
            let day = try row.int(1)
            let last = try row.int(2)
            try await connection.rows(
                """
                INSERT INTO activity_installations (project_id, day, identified, installation_id)
                SELECT DISTINCT project_id, day, identified, installation_id FROM profile_activity
                WHERE project_id = \(projectID) AND day = \(day) AND installation_id <> '' ON CONFLICT DO NOTHING
                """, logger: logger)
            for metric in ActivitySQL.metrics {
                let filter =
                    metric.identified.map { $0 ? "identified" : "NOT identified" }
                    ?? (metric.subject == "installation_id" ? "installation_id <> ''" : "true")
                let name = metric.name
                let subjects = """
                    WITH s(id) AS (
                        SELECT DISTINCT \(metric.subject) FROM profile_activity
                        WHERE project_id = $1 AND day = $2 AND \(filter) AND \(metric.subject) <> '')
                    """
                var bindings = PostgresBindings()
                bindings.append(projectID)
                bindings.append(day)
                bindings.append(name)
                for sql in [
                    """
                    \(subjects)
                    INSERT INTO activity_counts (project_id, day, name, count)
                    SELECT $1, l.day, 'latest.' || $3, -COUNT(*) FROM activity_latest l JOIN s ON l.subject_id = s.id
                    WHERE l.project_id = $1 AND l.name = $3 AND l.day < $2 GROUP BY l.day
                    ON CONFLICT (project_id, day, name) DO UPDATE SET count = activity_counts.count + excluded.count
                    """,
                    """
                    \(subjects)
                    INSERT INTO activity_counts (project_id, day, name, count)
                    SELECT $1, $2, 'latest.' || $3, COUNT(*) FROM s WHERE NOT EXISTS (
                        SELECT 1 FROM activity_latest l
                        WHERE l.project_id = $1 AND l.name = $3 AND l.subject_id = s.id AND l.day >= $2)
                    ON CONFLICT (project_id, day, name) DO UPDATE SET count = activity_counts.count + excluded.count
                    """,
                    """
                    \(subjects)
                    INSERT INTO activity_latest (project_id, name, subject_id, day) SELECT $1, $3, id, $2 FROM s
                    ON CONFLICT (project_id, name, subject_id) DO UPDATE SET day = excluded.day
                    WHERE excluded.day > activity_latest.day
                    """,
                    """
                    \(subjects)
                    INSERT INTO activity_counts (project_id, day, name, count)
                    SELECT $1, $2, 'active.' || $3, COUNT(*) FROM s
                    ON CONFLICT (project_id, day, name) DO UPDATE SET count = excluded.count
                    """,
                ] {
                    try await connection.rows(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
                }
            }
            if day >= last {
                try await connection.rows(
                    "DELETE FROM activity_backfill WHERE project_id = \(projectID)", logger: logger)
            } else {
                try await connection.rows(
                    "UPDATE activity_backfill SET next_day = \(day + 1) WHERE project_id = \(projectID)", logger: logger
                )
            }
            return true
        }
    }

    /// Deletes up to `batchSize` rows of each activity table dated before `day`; answers the most
    /// deleted from one table.
    public func deleteActivity(before day: Int64, batchSize: Int) async throws -> Int {
        let logger = logger
        let limit = Int64(batchSize)
        return try await statement { client in
            var most = 0
            for table in [
                "profile_activity", "daily_tallies", "activity_counts", "activity_installations", "activity_latest",
            ] {
                let deleted = try await client.rows(
                    """
                    DELETE FROM \(unescaped: table) WHERE ctid IN (
                        SELECT ctid FROM \(unescaped: table) WHERE day < \(day) LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                    RETURNING 1
                    """, logger: logger
                ).count
                most = max(most, deleted)
            }
            return most
        }
    }

    /// Replaces the erased profile's (and each alias's) ID in its activity rows, and as the subject
    /// of its latest days, with a fresh random ID each: every count stays, and nothing in them points
    /// back to the profile. An update fires no counting trigger.
    static func anonymiseActivity(
        projectID: String, profileIDs: [String], in connection: PostgresConnection, logger: Logger
    ) async throws {
        for profileID in profileIDs {
            let replacement = TimeOrderedID.make(prefix: "era_")
            try await connection.rows(
                "UPDATE profile_activity SET profile_id = \(replacement) WHERE profile_id = \(profileID)",
                logger: logger)
            try await connection.rows(
                """
                UPDATE activity_latest SET subject_id = \(replacement) WHERE project_id = \(projectID)
                    AND name IN ('profiles', 'profiles.anonymous', 'profiles.identified') AND subject_id = \(profileID)
                """, logger: logger)
        }
    }
}
