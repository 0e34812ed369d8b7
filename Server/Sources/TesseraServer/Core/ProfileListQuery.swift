import TesseraTokens

/// The parameters of `GET /v1/admin/profiles`, validated: a bad one is `invalid_request`, never a
/// 5xx, and the store never sees it.
enum ProfileListQuery {
    /// Builds the store's query for one page from the raw parameters (nil when absent); the store is
    /// asked for one profile more than the page, to know whether another page follows.
    static func parse(projectID: String, _ parameter: (String) -> String?) throws(CoreError) -> ProfileQuery {
        var query = ProfileQuery(projectID: projectID, limit: EventFeedQuery.defaultLimit)
        if let kind = parameter("kind") {
            guard let value = ProfileRecord.Kind(rawValue: kind) else {
                throw CoreError.invalidRequest("kind must be anonymous or identified.")
            }
            query.kind = value
        }
        query.verified = try flag("verified", parameter("verified"))
        query.blocked = try flag("blocked", parameter("blocked"))
        if let email = parameter("email") {
            // Counted in code points, as the document's maxLength counts them.
            guard (1...320).contains(email.unicodeScalars.count),
                !email.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else { throw CoreError.invalidRequest("email must be 1 to 320 characters without control characters.") }
            query.email = email
        }
        if let search = parameter("search") {
            guard (1...320).contains(search.unicodeScalars.count),
                !search.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else { throw CoreError.invalidRequest("search must be 1 to 320 characters without control characters.") }
            query.search = search
        }
        switch parameter("order") {
        case nil, "newest": break
        case "oldest": query.oldestFirst = true
        default: throw CoreError.invalidRequest("order must be newest or oldest.")
        }
        if let externalID = parameter("external_id") {
            guard InputRules.isExternalID(externalID) else {
                throw CoreError.invalidRequest(
                    "external_id must be 1 to 255 Unicode scalars without control characters.")
            }
            query.externalID = externalID
        }
        if let installationID = parameter("installation_id") {
            guard InputRules.isInstallationID(installationID.lowercased()) else {
                throw CoreError.invalidRequest("installation_id must be a UUID.")
            }
            query.installationID = installationID.lowercased()
        }
        if let cursor = parameter("cursor") { query.beforeID = try profileID(cursor: cursor) }
        if let limit = parameter("limit") {
            guard limit.utf8.count <= 3, !limit.isEmpty, limit.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let value = Int(limit), (1...EventFeedQuery.maximumLimit).contains(value)
            else {
                throw CoreError.invalidRequest("limit must be an integer from 1 to \(EventFeedQuery.maximumLimit).")
            }
            query.limit = value
        }
        return query
    }

    /// The cursor that follows a page ending with `profileID`: the ID itself, as the webhook list's
    /// cursor (opaque to clients all the same: the document describes its form only, so that a
    /// cursor of that form is never refused).
    static func cursor(after profileID: String) -> String { profileID }

    /// The profile ID a cursor holds; `invalid_request` for anything that is not such a cursor.
    static func profileID(cursor: String) throws(CoreError) -> String {
        guard InputRules.isIdentifier(cursor, prefix: "usr_") else {
            throw CoreError.invalidRequest("cursor must be a next_cursor from an earlier page.")
        }
        return cursor
    }

    /// `true` or `false`; nil when absent.
    private static func flag(_ name: String, _ value: String?) throws(CoreError) -> Bool? {
        switch value {
        case nil: return nil
        case "true": return true
        case "false": return false
        default: throw CoreError.invalidRequest("\(name) must be true or false.")
        }
    }
}
