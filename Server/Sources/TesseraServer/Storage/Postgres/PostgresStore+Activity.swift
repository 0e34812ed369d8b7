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

    /// Counts the next chunk of the activity written before migration 18, as
    /// `SQLiteStore.backfillActivity(chunkRows:)` does, in one transaction that first takes
    /// `profile_activity` in SHARE ROW EXCLUSIVE mode (no row is inserted, and no other backfill
    /// runs, until it commits: held for one chunk only), then locks the backfill row it acts on and
    /// reads where the day got to from it.
    public func backfillActivity(chunkRows: Int) async throws -> Bool {
        let logger = logger
        return try await transaction { connection in
            try await connection.rows("LOCK TABLE profile_activity IN SHARE ROW EXCLUSIVE MODE", logger: logger)
            guard
                let row = try await connection.first(
                    """
                    SELECT project_id, next_day, last_day, done_day, done_identified, done_profile_id,
                        done_installation_id
                    FROM activity_backfill ORDER BY project_id LIMIT 1 FOR UPDATE
                    """,
                    logger: logger)
            else { return false }
            let projectID = try row.text(0)
            let day = try row.int(1)
            let last = try row.int(2)
            // After the last row done of this day, else before the first (no profile ID is empty).
            let resumes = try row.optionalInt(3) == day
            func bindings(_ name: String) throws -> PostgresBindings {
                var bindings = PostgresBindings()
                bindings.append(projectID)
                bindings.append(day)
                bindings.append(Int64(max(chunkRows, 1)))
                bindings.append(name)
                bindings.append(resumes ? try row.bool(4) : false)
                bindings.append(resumes ? try row.text(5) : "")
                bindings.append(resumes ? try row.text(6) : "")
                return bindings
            }
            let chunk = """
                WITH c AS (
                    SELECT identified, profile_id, installation_id FROM profile_activity
                    WHERE project_id = $1 AND day = $2 AND (identified, profile_id, installation_id) > ($5, $6, $7)
                    ORDER BY identified, profile_id, installation_id LIMIT $3)
                """
            try await connection.rows(
                PostgresQuery(
                    unsafeSQL: """
                        \(chunk)
                        INSERT INTO activity_installations (project_id, day, identified, installation_id)
                        SELECT DISTINCT $1, $2, identified, installation_id FROM c WHERE installation_id <> ''
                        ON CONFLICT DO NOTHING
                        """, binds: try bindings("")), logger: logger)
            for metric in ActivitySQL.metrics {
                let filter = metric.identified.map { $0 ? "identified" : "NOT identified" } ?? "true"
                let subjects = """
                    \(chunk), s(id) AS (SELECT DISTINCT \(metric.subject) FROM c WHERE \(filter) AND \(metric.subject) <> '')
                    """
                for sql in [
                    """
                    \(subjects)
                    INSERT INTO activity_counts (project_id, day, name, count)
                    SELECT $1, l.day, 'latest.' || $4, -COUNT(*) FROM activity_latest l JOIN s ON l.subject_id = s.id
                    WHERE l.project_id = $1 AND l.name = $4 AND l.day < $2 GROUP BY l.day
                    ON CONFLICT (project_id, day, name) DO UPDATE SET count = activity_counts.count + excluded.count
                    """,
                    """
                    \(subjects)
                    INSERT INTO activity_counts (project_id, day, name, count)
                    SELECT $1, $2, 'latest.' || $4, COUNT(*) FROM s WHERE NOT EXISTS (
                        SELECT 1 FROM activity_latest l
                        WHERE l.project_id = $1 AND l.name = $4 AND l.subject_id = s.id AND l.day >= $2)
                    ON CONFLICT (project_id, day, name) DO UPDATE SET count = activity_counts.count + excluded.count
                    """,
                    """
                    \(subjects)
                    INSERT INTO activity_latest (project_id, name, subject_id, day) SELECT $1, $4, id, $2 FROM s
                    ON CONFLICT (project_id, name, subject_id) DO UPDATE SET day = excluded.day
                    WHERE excluded.day > activity_latest.day
                    """,
                ] {
                    try await connection.rows(
                        PostgresQuery(unsafeSQL: sql, binds: try bindings(metric.name)), logger: logger)
                }
            }
            // The chunk's last row: the day goes on after it. No row: the day's distinct counts next.
            if let end = try await connection.first(
                PostgresQuery(
                    unsafeSQL: """
                        \(chunk)
                        SELECT identified, profile_id, installation_id FROM c
                        ORDER BY identified DESC, profile_id DESC, installation_id DESC LIMIT 1
                        """, binds: try bindings("")), logger: logger)
            {
                let (identified, profileID, installationID) = (try end.bool(0), try end.text(1), try end.text(2))
                try await connection.rows(
                    """
                    UPDATE activity_backfill SET done_day = \(day), done_identified = \(identified),
                        done_profile_id = \(profileID), done_installation_id = \(installationID)
                    WHERE project_id = \(projectID)
                    """, logger: logger)
                return true
            }
            for metric in ActivitySQL.metrics {
                let source = metric.subject == "profile_id" ? "profile_activity" : "activity_installations"
                let filter = metric.identified.map { $0 ? "identified" : "NOT identified" } ?? "true"
                var bindings = PostgresBindings()
                bindings.append(projectID)
                bindings.append(day)
                bindings.append(metric.name)
                try await connection.rows(
                    PostgresQuery(
                        unsafeSQL: """
                            INSERT INTO activity_counts (project_id, day, name, count)
                            SELECT $1, $2, 'active.' || $3, COUNT(DISTINCT \(metric.subject)) FROM \(source)
                            WHERE project_id = $1 AND day = $2 AND \(filter) AND \(metric.subject) <> ''
                            ON CONFLICT (project_id, day, name) DO UPDATE SET count = excluded.count
                            """, binds: bindings), logger: logger)
            }
            if day >= last {
                try await connection.rows(
                    "DELETE FROM activity_backfill WHERE project_id = \(projectID)", logger: logger)
            } else {
                try await connection.rows(
                    "UPDATE activity_backfill SET next_day = \(day + 1), done_day = NULL WHERE project_id = \(projectID)",
                    logger: logger)
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
