import PostgresNIO

extension PostgresStore {
    /// Newest first through the index of the profile (`events_profile`) or of the type
    /// (`events_type`), both ordered by sequence within the project: no sort, no scan.
    public func recentEvents(projectID: String, type: String?, profileID: String?, before: Int64?, limit: Int)
        async throws -> [EventRecord]
    {
        try await sequenceEvents(projectID: projectID)
        let logger = logger
        let statement = Self.recentEventsStatement(
            projectID: projectID, type: type, profileID: profileID, before: before, limit: limit)
        return try await self.statement { client in
            try await client.rows(statement, logger: logger).map(Self.event)
        }
    }

    /// The statement of ``recentEvents(projectID:type:profileID:before:limit:)`` (its plan is tested).
    static func recentEventsStatement(projectID: String, type: String?, profileID: String?, before: Int64?, limit: Int)
        -> PostgresQuery
    {
        let (before, limit) = (before ?? Int64.max, Int64(limit))
        switch (profileID, type) {
        case (let profileID?, let type?):
            return """
                SELECT \(unescaped: Self.eventColumns) FROM events
                WHERE project_id = \(projectID) AND profile_id = \(profileID) AND type = \(type) AND sequence < \(before)
                ORDER BY sequence DESC LIMIT \(limit)
                """
        case (let profileID?, nil):
            return """
                SELECT \(unescaped: Self.eventColumns) FROM events
                WHERE project_id = \(projectID) AND profile_id = \(profileID) AND sequence < \(before)
                ORDER BY sequence DESC LIMIT \(limit)
                """
        case (nil, let type?):
            return """
                SELECT \(unescaped: Self.eventColumns) FROM events
                WHERE project_id = \(projectID) AND type = \(type) AND sequence < \(before)
                ORDER BY sequence DESC LIMIT \(limit)
                """
        case (nil, nil):
            return """
                SELECT \(unescaped: Self.eventColumns) FROM events
                WHERE project_id = \(projectID) AND sequence < \(before)
                ORDER BY sequence DESC LIMIT \(limit)
                """
        }
    }
}
