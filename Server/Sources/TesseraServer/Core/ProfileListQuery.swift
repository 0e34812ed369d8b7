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
        try createdRange(parameter("created_from"), parameter("created_to"), into: &query)
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

    /// `created_from` and `created_to`: each a day (`2026-11-28`, UTC) or an RFC 3339 date-time
    /// (`2026-11-28T09:30:00Z`, to the second). `created_from` is included; `created_to` is excluded
    /// when it is a date-time, and included whole when it is a day (`created_to=2026-11-28` ends at
    /// the next midnight, UTC). A range that ends before it starts is empty, not an error: every
    /// value the document's pattern allows is answered.
    static func createdRange(_ from: String?, _ to: String?, into query: inout ProfileQuery) throws(CoreError) {
        if let from {
            guard let instant = instant(from) else {
                throw CoreError.invalidRequest(
                    "created_from must be a day (2026-11-28) or a date-time (2026-11-28T09:30:00Z).")
            }
            query.createdFrom = instant.seconds
        }
        if let to {
            guard let instant = instant(to) else {
                throw CoreError.invalidRequest(
                    "created_to must be a day (2026-11-28) or a date-time (2026-11-28T09:30:00Z).")
            }
            query.createdUntil = instant.isDay ? instant.seconds + 86_400 : instant.seconds
        }
    }

    /// The second (Unix, UTC) of a day or of an RFC 3339 date-time (`2026-11-28T09:30:00Z`,
    /// `2026-11-28T10:30:00.5+01:00`; a fraction is dropped) from 1970 to 9999, and whether it was a
    /// day; nil for anything else. An offset that puts the instant before 1970 gives 1970's first
    /// second (no profile is older).
    static func instant(_ text: String) -> (seconds: Int64, isDay: Bool)? {
        if let day = AuditQuery.day(text) { return (day, true) }
        let bytes = Array(text.utf8)
        guard (20...40).contains(bytes.count), bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
            let day = AuditQuery.day(String(decoding: bytes[0..<10], as: UTF8.self)),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let hour = number(bytes[11..<13]), let minute = number(bytes[14..<16]), let second = number(bytes[17..<19]),
            hour < 24, minute < 60, second < 60
        else { return nil }
        var rest = bytes[19...]
        if rest.first == UInt8(ascii: ".") {
            rest = rest.dropFirst()
            let digits = rest.prefix { $0 >= 0x30 && $0 <= 0x39 }
            guard !digits.isEmpty else { return nil }
            rest = rest.dropFirst(digits.count)
        }
        var offset: Int64 = 0
        if rest.count == 1, rest.first == UInt8(ascii: "Z") || rest.first == UInt8(ascii: "z") {
            offset = 0
        } else if rest.count == 6, let sign = rest.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"),
            rest[rest.startIndex + 3] == UInt8(ascii: ":"),
            let hours = number(rest[(rest.startIndex + 1)..<(rest.startIndex + 3)]),
            let minutes = number(rest[(rest.startIndex + 4)..<(rest.startIndex + 6)]), hours < 24, minutes < 60
        {
            offset = (hours * 3600 + minutes * 60) * (sign == UInt8(ascii: "+") ? 1 : -1)
        } else {
            return nil
        }
        let seconds = day + hour * 3600 + minute * 60 + second - offset
        return (max(0, seconds), false)
    }

    /// Two ASCII digits as a number.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int64? {
        guard digits.count == 2, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int64($1 - 0x30) }
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
