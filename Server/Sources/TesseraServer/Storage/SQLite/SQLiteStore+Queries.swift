import Foundation

/// The console's reads: the profile list, lookup by any identifier, aliases, sessions by ID and the
/// overview's counts.
///
/// Each statement names the index it reads (`INDEXED BY`), so the plan does not depend on the
/// planner's guesses on a database without statistics, and a statement that could not use its index
/// fails instead of scanning the table. The statements are built by static functions, which the
/// query-plan test reads too.
extension SQLiteStore {
    /// A statement and its bindings.
    typealias Statement = (sql: String, bindings: [SQLiteValue])

    /// The (kind, verified) pairs a profile can have, in the order the list's branches read them.
    static let profileClasses: [(kind: ProfileRecord.Kind, verified: Bool)] = [
        (.anonymous, false), (.anonymous, true), (.identified, false), (.identified, true),
    ]

    /// The statement of one page of the profile list.
    ///
    /// The most selective filter chooses the index: an installation (its primary key, then the
    /// profile's), an external ID (`profiles_external_id`), an email (`profiles_email_folded`),
    /// blocked profiles (`profiles_blocked`), a search (``searchStatement(_:)``, or
    /// ``denseSearchStatement(_:)`` when its ranges are large); without any of these,
    /// `profiles_list` (project, kind, verified, id) is read in ID order once for each (kind,
    /// verified) pair the filters allow, each branch stopping after `limit` rows, and the branches
    /// are merged: at most four short index ranges, whatever the size of the project. The other
    /// filters are checked on the rows read.
    static func profilesStatement(_ query: ProfileQuery, denseSearch: Bool = false) -> Statement {
        var conditions: [String] = ["project_id = ?"]
        var bindings: [SQLiteValue] = [.init(query.projectID)]
        func add(_ condition: String, _ values: SQLiteValue...) {
            conditions.append(condition)
            bindings += values
        }
        let index: String
        if let installationID = query.installationID {
            index = "primary key"
            add(
                "id = (SELECT COALESCE(profile_id, previous_profile_id) FROM installations WHERE project_id = ? AND installation_id = ?)",
                .init(query.projectID), .init(installationID))
        } else if let externalID = query.externalID {
            index = "profiles_external_id"
            if let verified = query.verified { add("verified = ?", .init(verified)) } else { add("verified IN (1, 0)") }
            add("external_id = ?", .init(externalID))
        } else if let email = query.email {
            index = "profiles_email_folded"
            add("email IS NOT NULL AND lower(email) = ?", .init(ProfileSearch.folded(email)))
        } else if query.blocked == true {
            index = "profiles_blocked"
            add("blocked_at IS NOT NULL")
        } else if query.search != nil {
            return denseSearch ? denseSearchStatement(query) : searchStatement(query)
        } else {
            index = "profiles_list"
        }
        // The filters the index did not take.
        if let kind = query.kind, index != "profiles_list" { add("kind = ?", .init(kind.rawValue)) }
        if let verified = query.verified, index != "profiles_list", index != "profiles_external_id" {
            add("verified = ?", .init(verified))
        }
        if let email = query.email, index != "profiles_email_folded" {
            add("lower(email) = ?", .init(ProfileSearch.folded(email)))
        }
        if let externalID = query.externalID, index != "profiles_external_id" {
            add("external_id = ?", .init(externalID))
        }
        if let blocked = query.blocked, index != "profiles_blocked" {
            add(blocked ? "blocked_at IS NOT NULL" : "blocked_at IS NULL")
        }
        if let search = query.search {
            let ranges = searchRanges(search)
            conditions.append(ranges.condition)
            bindings += ranges.bindings
        }
        if let beforeID = query.beforeID { add(query.oldestFirst ? "id > ?" : "id < ?", .init(beforeID)) }
        let created = createdFilters(query)
        (conditions, bindings) = (conditions + created.conditions, bindings + created.bindings)
        let (limit, order) = (SQLiteValue(query.limit), query.oldestFirst ? "ASC" : "DESC")
        guard index == "profiles_list" else {
            // The installation's profile is one primary-key probe: no hint needed.
            let hint = index == "primary key" ? "" : "INDEXED BY \(index)"
            return (
                "SELECT \(profileColumns) FROM profiles \(hint) WHERE \(conditions.joined(separator: " AND "))"
                    + " ORDER BY id \(order) LIMIT ?", bindings + [limit]
            )
        }
        let classes = profileClasses.filter {
            (query.kind == nil || query.kind == $0.kind) && (query.verified == nil || query.verified == $0.verified)
        }
        var branches: [String] = []
        var all: [SQLiteValue] = []
        for item in classes {
            branches.append(
                """
                SELECT * FROM (SELECT \(profileColumns) FROM profiles INDEXED BY profiles_list
                WHERE kind = ? AND verified = ? AND \(conditions.joined(separator: " AND ")) ORDER BY id \(order) LIMIT ?)
                """)
            all += [.init(item.kind.rawValue), .init(item.verified)] + bindings + [limit]
        }
        return (branches.joined(separator: "\nUNION ALL\n") + "\nORDER BY id \(order) LIMIT ?", all + [limit])
    }

    /// The statement of one page of a search (``ProfileQuery/search``) without an installation,
    /// external ID or email to start from: the IDs whose folded email, name or external ID starts
    /// with the text, each read from its own index (`profiles_email_folded`, `profiles_name_folded`,
    /// `profiles_external_id_folded`: project, folded value, id) as one range, merged without
    /// repeats, then the page's rows by primary key. The other filters are checked on the rows of
    /// each range.
    static func searchStatement(_ query: ProfileQuery) -> Statement {
        let (low, high) = ProfileSearch.range(query.search ?? "")
        let (others, otherBindings) = searchFilters(query)
        let order = query.oldestFirst ? "ASC" : "DESC"
        var bindings: [SQLiteValue] = []
        let branches = ProfileSearch.columns.map { column in
            bindings += [.init(query.projectID), .init(low), .init(high)] + otherBindings
            return """
                SELECT id FROM profiles INDEXED BY profiles_\(column)_folded
                WHERE project_id = ? AND \(column) IS NOT NULL AND lower(\(column)) >= ? AND lower(\(column)) < ?
                """ + others.map { " AND " + $0 }.joined()
        }
        return (
            """
            SELECT \(profileColumns) FROM profiles WHERE id IN (
            SELECT id FROM (\(branches.joined(separator: "\nUNION\n"))) ORDER BY id \(order) LIMIT ?)
            ORDER BY id \(order)
            """, bindings + [.init(query.limit)]
        )
    }

    /// The condition that a profile's folded email, name or external ID starts with `search`.
    static func searchRanges(_ search: String) -> (condition: String, bindings: [SQLiteValue]) {
        let (low, high) = ProfileSearch.range(search)
        let condition =
            "(" + ProfileSearch.columns.map { "lower(\($0)) >= ? AND lower(\($0)) < ?" }.joined(separator: " OR ") + ")"
        return (condition, ProfileSearch.columns.flatMap { _ in [SQLiteValue(low), SQLiteValue(high)] })
    }

    /// The conditions a search's statements check besides its ranges: kind, verification, blocked
    /// and the cursor (as ``PostgresStore``'s `searchFilters`).
    static func searchFilters(_ query: ProfileQuery) -> (conditions: [String], bindings: [SQLiteValue]) {
        var (conditions, bindings): ([String], [SQLiteValue]) = ([], [])
        if let kind = query.kind {
            conditions.append("kind = ?")
            bindings.append(.init(kind.rawValue))
        }
        if let verified = query.verified {
            conditions.append("verified = ?")
            bindings.append(.init(verified))
        }
        if let blocked = query.blocked { conditions.append(blocked ? "blocked_at IS NOT NULL" : "blocked_at IS NULL") }
        if let beforeID = query.beforeID {
            conditions.append(query.oldestFirst ? "id > ?" : "id < ?")
            bindings.append(.init(beforeID))
        }
        let created = createdFilters(query)
        return (conditions + created.conditions, bindings + created.bindings)
    }

    /// The creation range of a query (``ProfileQuery/createdIDRange``) as conditions on the ID: a
    /// range of whichever index the statement reads in ID order.
    static func createdFilters(_ query: ProfileQuery) -> (conditions: [String], bindings: [SQLiteValue]) {
        var (conditions, bindings): ([String], [SQLiteValue]) = ([], [])
        let range = query.createdIDRange
        if let low = range.low {
            conditions.append("id >= ?")
            bindings.append(.init(low))
        }
        if let high = range.high {
            conditions.append("id < ?")
            bindings.append(.init(high))
        }
        return (conditions, bindings)
    }

    /// The statement of a dense search's page (``ProfileSearch/denseThreshold``): every profile of
    /// the project newest (or oldest) first through the primary key's index, the matches kept, until
    /// the page is full.
    static func denseSearchStatement(_ query: ProfileQuery) -> Statement {
        let ranges = searchRanges(query.search ?? "")
        let filters = searchFilters(query)
        let conditions = ["project_id = ?", ranges.condition] + filters.conditions
        let bindings: [SQLiteValue] = [.init(query.projectID)] + ranges.bindings + filters.bindings
        return (
            """
            SELECT \(profileColumns) FROM profiles INDEXED BY sqlite_autoindex_profiles_1
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY id \(query.oldestFirst ? "ASC" : "DESC") LIMIT ?
            """, bindings + [.init(query.limit)]
        )
    }

    /// The statement that measures a search: the most profiles one column's range holds, counted no
    /// further than ``ProfileSearch/denseThreshold``, from the folded indexes alone (the other
    /// filters are not read: a probe never reads a row).
    static func searchProbeStatement(_ query: ProfileQuery) -> Statement {
        let (low, high) = ProfileSearch.range(query.search ?? "")
        var bindings: [SQLiteValue] = []
        let counts = ProfileSearch.columns.map { column in
            bindings += [.init(query.projectID), .init(low), .init(high), .init(ProfileSearch.denseThreshold)]
            return """
                (SELECT COUNT(*) FROM (SELECT 1 FROM profiles INDEXED BY profiles_\(column)_folded
                WHERE project_id = ? AND \(column) IS NOT NULL AND lower(\(column)) >= ? AND lower(\(column)) < ? LIMIT ?))
                """
        }
        return ("SELECT MAX(" + counts.joined(separator: ", ") + ")", bindings)
    }

    /// Whether `query` is a dense search (``ProfileSearch/denseThreshold``), measured on `connection`.
    static func isDenseSearch(_ query: ProfileQuery, on connection: SQLiteConnection) throws -> Bool {
        guard ProfileSearch.drives(query) else { return false }
        let probe = searchProbeStatement(query)
        return try connection.queryFirst(probe.sql, probe.bindings)?.int(0) ?? 0 >= ProfileSearch.denseThreshold
    }

    public func profiles(_ query: ProfileQuery) async throws -> [ProfileRecord] {
        try await profiles(query, denseSearch: nil)
    }

    /// `profiles(_:)` with a search's way forced (tests compare the two); nil measures.
    func profiles(_ query: ProfileQuery, denseSearch: Bool?) async throws -> [ProfileRecord] {
        try readers.read { connection in
            let dense = try denseSearch ?? Self.isDenseSearch(query, on: connection)
            let statement = Self.profilesStatement(query, denseSearch: dense)
            return try connection.query(statement.sql, statement.bindings).map { Self.profile($0) }
        }
    }

    /// The statement that counts `query`'s profiles up to `cap + 1` (``TesseraStore/countProfiles(_:cap:)``).
    static func countProfilesStatement(_ query: ProfileQuery, cap: Int, denseSearch: Bool = false) -> Statement {
        var counted = query
        (counted.beforeID, counted.limit) = (nil, cap + 1)
        let statement = profilesStatement(counted, denseSearch: denseSearch)
        return ("SELECT COUNT(*) FROM (\(statement.sql))", statement.bindings)
    }

    public func countProfiles(_ query: ProfileQuery, cap: Int) async throws -> Int {
        try readers.read { connection in
            let dense = try Self.isDenseSearch(query, on: connection)
            let statement = Self.countProfilesStatement(query, cap: cap, denseSearch: dense)
            return Int(try connection.queryFirst(statement.sql, statement.bindings)?.int(0) ?? 0)
        }
    }

    /// The statements `lookupProfile` tries in order, each answering at most one profile row.
    static func lookupStatements(projectID: String, identifier: String) -> [Statement] {
        let (project, value) = (SQLiteValue(projectID), SQLiteValue(identifier))
        var statements: [Statement] = []
        if identifier.hasPrefix("usr_") {
            statements.append(
                ("SELECT \(profileColumns) FROM profiles WHERE id = ? AND project_id = ?", [value, project]))
            statements.append(
                (
                    """
                    SELECT \(qualifiedProfileColumns) FROM profile_aliases a JOIN profiles p ON p.id = a.profile_id
                    WHERE a.alias_id = ? AND a.project_id = ? AND p.project_id = ?
                    """, [value, project, project]
                ))
        } else if identifier.hasPrefix("ses_") {
            statements.append(
                (
                    """
                    SELECT \(qualifiedProfileColumns) FROM sessions s JOIN profiles p ON p.id = s.profile_id
                    WHERE s.id = ? AND s.project_id = ? AND p.project_id = ?
                    """, [value, project, project]
                ))
        } else if identifier.hasPrefix("dev_") {
            statements.append(
                (
                    """
                    SELECT \(qualifiedProfileColumns) FROM devices d JOIN profiles p ON p.id = d.profile_id
                    WHERE d.id = ? AND d.project_id = ? AND p.project_id = ?
                    """, [value, project, project]
                ))
        } else if InputRules.isInstallationID(identifier.lowercased()) {
            statements.append(
                (
                    """
                    SELECT \(qualifiedProfileColumns) FROM installations i JOIN profiles p ON p.id = COALESCE(i.profile_id, i.previous_profile_id)
                    WHERE i.project_id = ? AND i.installation_id = ? AND p.project_id = ?
                    """, [project, .init(identifier.lowercased()), project]
                ))
        }
        // An external ID or an email may look like anything, an identifier above included.
        statements.append(
            (
                """
                SELECT \(profileColumns) FROM profiles INDEXED BY profiles_external_id
                WHERE project_id = ? AND verified IN (1, 0) AND external_id = ? ORDER BY verified DESC LIMIT 1
                """, [project, value]
            ))
        statements.append(
            (
                """
                SELECT \(profileColumns) FROM profiles INDEXED BY profiles_email_folded
                WHERE project_id = ? AND email IS NOT NULL AND lower(email) = ? ORDER BY id DESC LIMIT 1
                """, [project, .init(ProfileSearch.folded(identifier))]
            ))
        // A push token names the profile of the device that registered it.
        statements.append(
            (
                """
                SELECT \(qualifiedProfileColumns) FROM devices d JOIN profiles p ON p.id = d.profile_id
                WHERE d.project_id = ? AND d.platform IN ('apns', 'fcm') AND d.token = ? AND p.project_id = ?
                ORDER BY d.id DESC LIMIT 1
                """, [project, value, project]
            ))
        return statements
    }

    public func lookupProfile(projectID: String, identifier: String) async throws -> ProfileRecord? {
        let statements = Self.lookupStatements(projectID: projectID, identifier: identifier)
        return try readers.read { connection in
            for statement in statements {
                if let row = try connection.queryFirst(statement.sql, statement.bindings) { return Self.profile(row) }
            }
            return nil
        }
    }

    /// The statement of the aliases of a profile (by its own ID).
    static func aliasesStatement(projectID: String, profileID: String) -> Statement {
        (
            """
            SELECT alias_id, profile_id, created_at FROM profile_aliases
            WHERE profile_id = ? AND project_id = ? ORDER BY created_at, alias_id
            """, [.init(profileID), .init(projectID)]
        )
    }

    public func aliases(projectID: String, profileID: String) async throws -> [ProfileAliasRecord] {
        try readers.read { connection in
            guard let profile = try Self.resolveProfile(projectID: projectID, id: profileID, in: connection) else {
                return []
            }
            let statement = Self.aliasesStatement(projectID: projectID, profileID: profile.id)
            return try connection.query(statement.sql, statement.bindings).map {
                ProfileAliasRecord(aliasID: $0.text(0), profileID: $0.text(1), createdAt: $0.int(2))
            }
        }
    }

    /// The statement of the sessions with these IDs.
    static func sessionsStatement(projectID: String, ids: [String]) -> Statement {
        let marks = Array(repeating: "?", count: ids.count).joined(separator: ", ")
        return (
            "SELECT \(sessionColumns) FROM sessions WHERE id IN (\(marks)) AND project_id = ?",
            ids.map { .init($0) } + [.init(projectID)]
        )
    }

    public func sessions(projectID: String, ids: [String]) async throws -> [SessionRecord] {
        guard !ids.isEmpty else { return [] }
        let statement = Self.sessionsStatement(projectID: projectID, ids: ids)
        let found = try readers.read { try $0.query(statement.sql, statement.bindings).map { Self.session($0) } }
        let byID = Dictionary(found.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var seen = Set<String>()
        return ids.compactMap { seen.insert($0).inserted ? byID[$0] : nil }
    }

    /// The statements of the overview's counts: profiles by kind, blocked profiles, live sessions.
    ///
    /// The first two read only their indexes (covering); the live sessions are the range of
    /// `sessions_expires_at` after `now`, each row read for its project and revocation.
    static func countStatements(projectID: String, now: Int64) -> [Statement] {
        [
            (
                "SELECT kind, COUNT(*) FROM profiles INDEXED BY profiles_list WHERE project_id = ? GROUP BY kind",
                [.init(projectID)]
            ),
            (
                "SELECT COUNT(*) FROM profiles INDEXED BY profiles_blocked WHERE project_id = ? AND blocked_at IS NOT NULL",
                [.init(projectID)]
            ),
            (
                """
                SELECT COUNT(*) FROM sessions INDEXED BY sessions_expires_at
                WHERE expires_at > ? AND project_id = ? AND revoked_at IS NULL
                """, [.init(now), .init(projectID)]
            ),
        ]
    }

    public func projectCounts(projectID: String, now: Int64) async throws -> ProjectCounts {
        let statements = Self.countStatements(projectID: projectID, now: now)
        // Counting a million rows takes seconds on a busy machine: on a thread of its own, never on
        // an event loop (which would stall every request that loop serves).
        let readers = readers
        return try await Self.onOwnThread {
            try readers.snapshot { connection in
                var counts = ProjectCounts(
                    profiles: 0, anonymousProfiles: 0, identifiedProfiles: 0, blockedProfiles: 0, liveSessions: 0)
                for row in try connection.query(statements[0].sql, statements[0].bindings) {
                    let count = Int(row.int(1))
                    counts.profiles += count
                    switch ProfileRecord.Kind(rawValue: row.text(0)) {
                    case .anonymous: counts.anonymousProfiles += count
                    case .identified: counts.identifiedProfiles += count
                    case nil: break
                    }
                }
                counts.blockedProfiles = Int(
                    try connection.queryFirst(statements[1].sql, statements[1].bindings)?.int(0) ?? 0)
                counts.liveSessions = Int(
                    try connection.queryFirst(statements[2].sql, statements[2].bindings)?.int(0) ?? 0)
                return counts
            }
        }
    }

    /// Runs `body` on a new thread and answers its result: for the rare long read that must not
    /// hold a cooperative or event-loop thread.
    static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.name = "tessera-sqlite-count"
            thread.start()
        }
    }

    /// The plan SQLite chooses for `statement`: the detail of each line of `EXPLAIN QUERY PLAN`
    /// (for the tests that check no console query scans a table).
    func queryPlan(_ statement: Statement) throws -> [String] {
        try readers.read { try $0.query("EXPLAIN QUERY PLAN " + statement.sql, statement.bindings).map { $0.text(3) } }
    }
}
