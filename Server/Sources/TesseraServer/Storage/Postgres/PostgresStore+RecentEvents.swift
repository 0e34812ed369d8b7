import PostgresNIO

extension PostgresStore {
    /// Newest first through the index of the profile (`events_profile`) or of the type
    /// (`events_type`), both ordered by sequence within the project: no sort, no scan.
    public func recentEvents(projectID: String, type: String?, profileID: String?, before: Int64?, limit: Int)
        async throws -> [EventRecord]
    {
        try await sequenceEvents(projectID: projectID)
        let logger = logger
        let (before, limit) = (before ?? Int64.max, Int64(limit))
        return try await statement { client in
            switch (profileID, type) {
            case (let profileID?, let type?):
                try await client.rows(
                    """
                    SELECT \(unescaped: Self.eventColumns) FROM events
                    WHERE project_id = \(projectID) AND profile_id = \(profileID) AND type = \(type)
                        AND sequence < \(before)
                    ORDER BY sequence DESC LIMIT \(limit)
                    """, logger: logger
                ).map(Self.event)
            case (let profileID?, nil):
                try await client.rows(
                    """
                    SELECT \(unescaped: Self.eventColumns) FROM events
                    WHERE project_id = \(projectID) AND profile_id = \(profileID) AND sequence < \(before)
                    ORDER BY sequence DESC LIMIT \(limit)
                    """, logger: logger
                ).map(Self.event)
            case (nil, let type?):
                try await client.rows(
                    """
                    SELECT \(unescaped: Self.eventColumns) FROM events
                    WHERE project_id = \(projectID) AND type = \(type) AND sequence < \(before)
                    ORDER BY sequence DESC LIMIT \(limit)
                    """, logger: logger
                ).map(Self.event)
            case (nil, nil):
                try await client.rows(
                    """
                    SELECT \(unescaped: Self.eventColumns) FROM events
                    WHERE project_id = \(projectID) AND sequence < \(before)
                    ORDER BY sequence DESC LIMIT \(limit)
                    """, logger: logger
                ).map(Self.event)
            }
        }
    }
}
