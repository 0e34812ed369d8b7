import Foundation

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

/// The parameters of `GET /v1/admin/audit`, validated: a bad one is `invalid_request`, never a 5xx.
enum AuditQuery {
    /// The sequence to list before (nil: from the newest) and the page size.
    static func parse(cursor: String?, limit: String?) throws(CoreError) -> (before: Int64?, limit: Int) {
        var before: Int64?
        if let cursor {
            // The cursor is opaque to clients; it is the sequence of the last entry of the page before.
            // (19 digits can exceed Int64.max: such a cursor is past every sequence, i.e. the newest.)
            guard cursor.utf8.count <= 19, !cursor.isEmpty, cursor.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let value = UInt64(cursor)
            else { throw CoreError.invalidRequest("cursor must be a next_cursor from an earlier page.") }
            before = Int64(clamping: value)
        }
        var size = EventFeedQuery.defaultLimit
        if let limit {
            guard limit.utf8.count <= 3, limit.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let value = Int(limit), (1...EventFeedQuery.maximumLimit).contains(value)
            else {
                throw CoreError.invalidRequest("limit must be an integer from 1 to \(EventFeedQuery.maximumLimit).")
            }
            size = value
        }
        return (before, size)
    }

    /// The audit filters of a query (each optional): `type` an event type, `actor` `secret_key` or an
    /// operator ID, `profile` a profile ID, `from` and `to` days (`2026-11-28`, UTC, both included).
    static func filter(type: String?, actor: String?, profile: String?, from: String?, to: String?)
        throws(CoreError) -> AuditFilter
    {
        var filter = AuditFilter()
        if let type {
            guard EventTypes.known.contains(type) else { throw CoreError.invalidRequest("type is not an event type.") }
            filter.type = type
        }
        if let actor {
            if actor == EventActor.Kind.secretKey.rawValue {
                filter.actor = .secretKey
            } else if InputRules.isIdentifier(actor, prefix: "opr_") {
                filter.actor = .operator(actor)
            } else {
                throw CoreError.invalidRequest("actor must be secret_key or an operator ID (opr_…).")
            }
        }
        if let profile {
            guard InputRules.isIdentifier(profile, prefix: "usr_") else {
                throw CoreError.invalidRequest("profile must be a profile ID (usr_…).")
            }
            filter.profileID = profile
        }
        if let from {
            guard let day = day(from) else { throw CoreError.invalidRequest("from must be a day: 2026-11-28.") }
            filter.from = day
        }
        if let to {
            guard let day = day(to) else { throw CoreError.invalidRequest("to must be a day: 2026-11-28.") }
            filter.until = day + 86_400
        }
        if let from = filter.from, let until = filter.until, from >= until {
            throw CoreError.invalidRequest("from must not be after to.")
        }
        return filter
    }

    /// The first second (Unix, UTC) of a `YYYY-MM-DD` day from 1970 to 9999, or nil (also for a day
    /// the month does not have).
    static func day(_ text: String) -> Int64? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].utf8.count == 4, parts[1].utf8.count == 2, parts[2].utf8.count == 2,
            parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]), year >= 1970
        else { return nil }
        let wanted = DateComponents(year: year, month: month, day: day)
        // The calendar rolls 2026-02-30 over to March: a day that does not come back as asked is refused.
        guard let date = utcCalendar.date(from: wanted),
            utcCalendar.dateComponents([.year, .month, .day], from: date) == wanted
        else { return nil }
        return Int64(date.timeIntervalSince1970)
    }

    private static let utcCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        return calendar
    }()
}
