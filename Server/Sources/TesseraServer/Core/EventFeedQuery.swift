/// The parameters of `GET /v1/admin/events`, validated: a bad one is `invalid_request`, never a 5xx.
enum EventFeedQuery {
    /// The page size when none is given, and the largest allowed.
    static let defaultLimit = 50
    static let maximumLimit = 200

    /// Builds the store's query from the raw parameters (nil when absent).
    static func parse(
        projectID: String, after: String?, types: String?, profileID: String?, limit: String?
    ) throws(CoreError) -> EventQuery {
        var query = EventQuery(projectID: projectID, after: 0, limit: defaultLimit)
        if let after {
            guard after.utf8.count <= 19, after.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let value = Int64(after)
            else { throw CoreError.invalidRequest("after must be a sequence number (a non-negative integer).") }
            query.after = value
        }
        if let types {
            let names = types.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard names.allSatisfy({ EventType(rawValue: $0) != nil }) else {
                throw CoreError.invalidRequest(
                    "types must be a comma-separated list of event types, e.g. profile.merged,session.ended.")
            }
            var seen = Set<String>()
            query.types = names.filter { seen.insert($0).inserted }
        }
        if let profileID {
            guard InputRules.isIdentifier(profileID, prefix: "usr_") else {
                throw CoreError.invalidRequest("profile_id must be a profile ID (usr_…).")
            }
            query.profileID = profileID
        }
        if let limit {
            guard limit.utf8.count <= 3, limit.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let value = Int(limit), (1...maximumLimit).contains(value)
            else { throw CoreError.invalidRequest("limit must be an integer from 1 to \(maximumLimit).") }
            query.limit = value
        }
        return query
    }
}
