extension SQLiteStore {
    /// Newest first through the index of the profile (`events_profile`) or of the type
    /// (`events_type`), both ordered by sequence within the project: no sort, no scan.
    public func recentEvents(projectID: String, type: String?, profileID: String?, before: Int64?, limit: Int)
        async throws -> [EventRecord]
    {
        let statement = Self.recentEventsStatement(
            projectID: projectID, type: type, profileID: profileID, before: before, limit: limit)
        return try readers.read { try $0.query(statement.sql, statement.bindings).map(Self.event) }
    }

    /// The statement of ``recentEvents(projectID:type:profileID:before:limit:)`` (its plan is tested).
    static func recentEventsStatement(projectID: String, type: String?, profileID: String?, before: Int64?, limit: Int)
        -> Statement
    {
        var sql = "SELECT \(Self.eventColumns) FROM events WHERE project_id = ? AND sequence < ?"
        var bindings: [SQLiteValue] = [.init(projectID), .init(before ?? Int64.max)]
        if let profileID {
            sql += " AND profile_id = ?"
            bindings.append(.init(profileID))
        }
        if let type {
            sql += " AND type = ?"
            bindings.append(.init(type))
        }
        sql += " ORDER BY sequence DESC LIMIT ?"
        bindings.append(.init(limit))
        return (sql, bindings)
    }
}
