import PostgresNIO

/// The console's reads: the profile list, lookup by any identifier, aliases, sessions by ID and the
/// overview's counts; the same statements and indexes as the SQLite store
/// (``SQLiteStore/profilesStatement(_:)``). The statements are built by static functions, which the
/// query-plan test reads too.
extension PostgresStore {
    /// Builds a statement with numbered parameters.
    struct QueryBuilder {
        var binds = PostgresBindings()

        /// Binds `value` and returns its placeholder (`$n`).
        mutating func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }

        func query(_ sql: String) -> PostgresQuery { PostgresQuery(unsafeSQL: sql, binds: binds) }
    }

    /// `column`'s folded value as the folded indexes hold it (``ProfileSearch``): ASCII capitals made
    /// small, in the "C" collation.
    static func folded(_ column: String) -> String {
        "(translate(\(column), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') COLLATE \"C\")"
    }

    /// The statement of one page of the profile list: the most selective filter chooses the index
    /// (see ``SQLiteStore/profilesStatement(_:)``); without one, `profiles_list` is read in ID order
    /// once for each (kind, verified) pair the filters allow, each branch stopping after `limit` rows.
    static func profilesStatement(_ query: ProfileQuery, denseSearch: Bool = false) -> PostgresQuery {
        var builder = QueryBuilder()
        let project = builder.bind(query.projectID)
        var conditions = ["project_id = \(project)"]
        enum Driver { case installation, externalID, email, blocked, list }
        let driver: Driver
        if let installationID = query.installationID {
            driver = .installation
            let id = builder.bind(installationID)
            conditions.append(
                "id = (SELECT COALESCE(profile_id, previous_profile_id) FROM installations WHERE project_id = \(project) AND installation_id = \(id))"
            )
        } else if let externalID = query.externalID {
            driver = .externalID
            conditions.append("external_id = \(builder.bind(externalID))")
        } else if let email = query.email {
            driver = .email
            conditions.append(
                "email IS NOT NULL AND \(folded("email")) = \(builder.bind(ProfileSearch.folded(email))) COLLATE \"C\"")
        } else if query.blocked == true {
            driver = .blocked
            conditions.append("blocked_at IS NOT NULL")
        } else if query.search != nil {
            return denseSearch ? denseSearchStatement(query) : searchStatement(query)
        } else {
            driver = .list
        }
        if let kind = query.kind, driver != .list { conditions.append("kind = \(builder.bind(kind.rawValue))") }
        if let verified = query.verified, driver != .list { conditions.append("verified = \(builder.bind(verified))") }
        if let email = query.email, driver != .email {
            conditions.append("\(folded("email")) = \(builder.bind(ProfileSearch.folded(email))) COLLATE \"C\"")
        }
        if let externalID = query.externalID, driver != .externalID {
            conditions.append("external_id = \(builder.bind(externalID))")
        }
        if let blocked = query.blocked, driver != .blocked {
            conditions.append(blocked ? "blocked_at IS NOT NULL" : "blocked_at IS NULL")
        }
        if let search = query.search {
            let (low, high) = ProfileSearch.range(search)
            let (from, to) = (builder.bind(low), builder.bind(high))
            let ranges = ProfileSearch.columns.map {
                "\(folded($0)) >= \(from) COLLATE \"C\" AND \(folded($0)) < \(to) COLLATE \"C\""
            }
            conditions.append("(" + ranges.joined(separator: " OR ") + ")")
        }
        if let beforeID = query.beforeID {
            conditions.append("id \(query.oldestFirst ? ">" : "<") \(builder.bind(beforeID))")
        }
        conditions += createdFilters(query, &builder)
        let (limit, order) = (builder.bind(Int64(query.limit)), query.oldestFirst ? "ASC" : "DESC")
        let filter = conditions.joined(separator: " AND ")
        guard driver == .list else {
            return builder.query(
                "SELECT \(profileColumns) FROM profiles WHERE \(filter) ORDER BY id \(order) LIMIT \(limit)")
        }
        let branches = SQLiteStore.profileClasses.filter {
            (query.kind == nil || query.kind == $0.kind) && (query.verified == nil || query.verified == $0.verified)
        }.map {
            """
            (SELECT \(profileColumns) FROM profiles
            WHERE kind = '\($0.kind.rawValue)' AND verified = \($0.verified) AND \(filter)
            ORDER BY id \(order) LIMIT \(limit))
            """
        }
        return builder.query(
            "SELECT * FROM (\(branches.joined(separator: "\nUNION ALL\n"))) AS page ORDER BY id \(order) LIMIT \(limit)"
        )
    }

    /// The statement of one page of a search without an installation, external ID or email to start
    /// from (see ``SQLiteStore/searchStatement(_:)``): one range of each folded index, merged without
    /// repeats, then the page's rows by primary key.
    static func searchStatement(_ query: ProfileQuery) -> PostgresQuery {
        var builder = QueryBuilder()
        let project = builder.bind(query.projectID)
        let (low, high) = ProfileSearch.range(query.search ?? "")
        let (from, to) = (builder.bind(low), builder.bind(high))
        var others = searchFilters(query, &builder)
        if let beforeID = query.beforeID {
            others.append("id \(query.oldestFirst ? ">" : "<") \(builder.bind(beforeID))")
        }
        let (limit, order) = (builder.bind(Int64(query.limit)), query.oldestFirst ? "ASC" : "DESC")
        let branches = ProfileSearch.columns.map { column in
            """
            SELECT id FROM profiles WHERE project_id = \(project) AND \(column) IS NOT NULL
                AND \(folded(column)) >= \(from) COLLATE "C" AND \(folded(column)) < \(to) COLLATE "C"
            """ + others.map { " AND " + $0 }.joined()
        }
        return builder.query(
            """
            SELECT \(profileColumns) FROM profiles WHERE id IN (
            SELECT id FROM (\(branches.joined(separator: "\nUNION\n"))) AS found ORDER BY id \(order) LIMIT \(limit))
            ORDER BY id \(order)
            """)
    }

    /// The conditions a search's statements share besides its ranges: kind, verification, blocked.
    private static func searchFilters(_ query: ProfileQuery, _ builder: inout QueryBuilder) -> [String] {
        var others: [String] = []
        if let kind = query.kind { others.append("kind = \(builder.bind(kind.rawValue))") }
        if let verified = query.verified { others.append("verified = \(builder.bind(verified))") }
        if let blocked = query.blocked { others.append(blocked ? "blocked_at IS NOT NULL" : "blocked_at IS NULL") }
        return others + createdFilters(query, &builder)
    }

    /// The creation range of a query (``ProfileQuery/createdIDRange``) as conditions on the ID (see
    /// ``SQLiteStore/createdFilters(_:)``).
    static func createdFilters(_ query: ProfileQuery, _ builder: inout QueryBuilder) -> [String] {
        let range = query.createdIDRange
        return [range.low.map { "id >= \(builder.bind($0))" }, range.high.map { "id < \(builder.bind($0))" }]
            .compactMap { $0 }
    }

    /// The statement of a dense search's page (see ``SQLiteStore/denseSearchStatement(_:)``): the
    /// project's profiles in ID order through the primary key, the matches kept until the page is full.
    static func denseSearchStatement(_ query: ProfileQuery) -> PostgresQuery {
        var builder = QueryBuilder()
        var conditions = ["project_id = \(builder.bind(query.projectID))"]
        let (low, high) = ProfileSearch.range(query.search ?? "")
        let (from, to) = (builder.bind(low), builder.bind(high))
        let ranges = ProfileSearch.columns.map {
            "\(folded($0)) >= \(from) COLLATE \"C\" AND \(folded($0)) < \(to) COLLATE \"C\""
        }
        conditions.append("(" + ranges.joined(separator: " OR ") + ")")
        conditions += searchFilters(query, &builder)
        if let beforeID = query.beforeID {
            conditions.append("id \(query.oldestFirst ? ">" : "<") \(builder.bind(beforeID))")
        }
        let (limit, order) = (builder.bind(Int64(query.limit)), query.oldestFirst ? "ASC" : "DESC")
        return builder.query(
            """
            SELECT \(profileColumns) FROM profiles WHERE \(conditions.joined(separator: " AND "))
            ORDER BY id \(order) LIMIT \(limit)
            """)
    }

    /// The statement that measures a search (see ``SQLiteStore/searchProbeStatement(_:)``): the most
    /// profiles one column's range holds, counted no further than the threshold, from the indexes.
    static func searchProbeStatement(_ query: ProfileQuery) -> PostgresQuery {
        var builder = QueryBuilder()
        let project = builder.bind(query.projectID)
        let (low, high) = ProfileSearch.range(query.search ?? "")
        let (from, to) = (builder.bind(low), builder.bind(high))
        let limit = builder.bind(Int64(ProfileSearch.denseThreshold))
        let counts = ProfileSearch.columns.map { column in
            """
            (SELECT COUNT(*) FROM (SELECT 1 FROM profiles WHERE project_id = \(project) AND \(column) IS NOT NULL
                AND \(folded(column)) >= \(from) COLLATE "C" AND \(folded(column)) < \(to) COLLATE "C"
                LIMIT \(limit)) AS range_\(column))
            """
        }
        return builder.query("SELECT GREATEST(" + counts.joined(separator: ", ") + ")")
    }

    /// Whether `query` is a dense search (``ProfileSearch/denseThreshold``), measured with `client`.
    private static func isDenseSearch(_ query: ProfileQuery, client: PostgresClient, logger: Logger)
        async throws -> Bool
    {
        guard ProfileSearch.drives(query) else { return false }
        let count = try await client.first(searchProbeStatement(query), logger: logger)?.int(0) ?? 0
        return count >= ProfileSearch.denseThreshold
    }

    public func profiles(_ query: ProfileQuery) async throws -> [ProfileRecord] {
        try await profiles(query, denseSearch: nil)
    }

    /// `profiles(_:)` with a search's way forced (tests compare the two); nil measures.
    func profiles(_ query: ProfileQuery, denseSearch: Bool?) async throws -> [ProfileRecord] {
        let logger = logger
        return try await statement { client in
            var dense = denseSearch
            if dense == nil { dense = try await Self.isDenseSearch(query, client: client, logger: logger) }
            return try await client.rows(Self.profilesStatement(query, denseSearch: dense ?? false), logger: logger)
                .map(Self.profile)
        }
    }

    /// The statement that counts `query`'s profiles up to `cap + 1` (``TesseraStore/countProfiles(_:cap:)``).
    static func countProfilesStatement(_ query: ProfileQuery, cap: Int, denseSearch: Bool = false) -> PostgresQuery {
        var counted = query
        (counted.beforeID, counted.limit) = (nil, cap + 1)
        let page = profilesStatement(counted, denseSearch: denseSearch)
        return PostgresQuery(unsafeSQL: "SELECT COUNT(*) FROM (\(page.sql)) AS counted", binds: page.binds)
    }

    public func countProfiles(_ query: ProfileQuery, cap: Int) async throws -> Int {
        let logger = logger
        return try await statement { client in
            let dense = try await Self.isDenseSearch(query, client: client, logger: logger)
            let select = Self.countProfilesStatement(query, cap: cap, denseSearch: dense)
            return Int(try await client.first(select, logger: logger)?.int(0) ?? 0)
        }
    }

    /// The statements `lookupProfile` tries in order, each answering at most one profile row.
    static func lookupStatements(projectID: String, identifier: String) -> [PostgresQuery] {
        let columns = qualifiedProfileColumns
        var statements: [PostgresQuery] = []
        if identifier.hasPrefix("usr_") {
            statements.append(
                "SELECT \(unescaped: profileColumns) FROM profiles WHERE id = \(identifier) AND project_id = \(projectID)"
            )
            statements.append(
                """
                SELECT \(unescaped: columns) FROM profile_aliases a JOIN profiles p ON p.id = a.profile_id
                WHERE a.alias_id = \(identifier) AND a.project_id = \(projectID) AND p.project_id = \(projectID)
                """)
        } else if identifier.hasPrefix("ses_") {
            statements.append(
                """
                SELECT \(unescaped: columns) FROM sessions s JOIN profiles p ON p.id = s.profile_id
                WHERE s.id = \(identifier) AND s.project_id = \(projectID) AND p.project_id = \(projectID)
                """)
        } else if identifier.hasPrefix("dev_") {
            statements.append(
                """
                SELECT \(unescaped: columns) FROM devices d JOIN profiles p ON p.id = d.profile_id
                WHERE d.id = \(identifier) AND d.project_id = \(projectID) AND p.project_id = \(projectID)
                """)
        } else if InputRules.isInstallationID(identifier.lowercased()) {
            statements.append(
                """
                SELECT \(unescaped: columns) FROM installations i JOIN profiles p ON p.id = COALESCE(i.profile_id, i.previous_profile_id)
                WHERE i.project_id = \(projectID) AND i.installation_id = \(identifier.lowercased())
                    AND p.project_id = \(projectID)
                """)
        }
        statements.append(
            """
            SELECT \(unescaped: profileColumns) FROM profiles
            WHERE project_id = \(projectID) AND external_id = \(identifier) ORDER BY verified DESC LIMIT 1
            """)
        statements.append(
            """
            SELECT \(unescaped: profileColumns) FROM profiles
            WHERE project_id = \(projectID) AND email IS NOT NULL
                AND \(unescaped: folded("email")) = \(ProfileSearch.folded(identifier)) COLLATE "C"
            ORDER BY id DESC LIMIT 1
            """)
        // A push token names the profile of the device that registered it.
        statements.append(
            """
            SELECT \(unescaped: columns) FROM devices d JOIN profiles p ON p.id = d.profile_id
            WHERE d.project_id = \(projectID) AND d.platform IN ('apns', 'fcm') AND d.token = \(identifier)
                AND p.project_id = \(projectID)
            ORDER BY d.id DESC LIMIT 1
            """)
        return statements
    }

    public func lookupProfile(projectID: String, identifier: String) async throws -> ProfileRecord? {
        let (logger, statements) = (logger, Self.lookupStatements(projectID: projectID, identifier: identifier))
        return try await statement { client in
            for select in statements {
                if let row = try await client.first(select, logger: logger) { return try Self.profile(row) }
            }
            return nil
        }
    }

    /// The statement of the aliases of a profile (by its own ID).
    static func aliasesStatement(projectID: String, profileID: String) -> PostgresQuery {
        """
        SELECT alias_id, profile_id, created_at FROM profile_aliases
        WHERE profile_id = \(profileID) AND project_id = \(projectID) ORDER BY created_at, alias_id
        """
    }

    public func aliases(projectID: String, profileID: String) async throws -> [ProfileAliasRecord] {
        let logger = logger
        return try await transaction { connection in
            guard
                let profile = try await Self.resolveProfile(
                    projectID: projectID, id: profileID, in: connection, logger: logger)
            else { return [] }
            return try await connection.rows(
                Self.aliasesStatement(projectID: projectID, profileID: profile.id), logger: logger
            ).map {
                ProfileAliasRecord(aliasID: try $0.text(0), profileID: try $0.text(1), createdAt: try $0.int(2))
            }
        }
    }

    /// The statement of the sessions with these IDs.
    static func sessionsStatement(projectID: String, ids: [String]) -> PostgresQuery {
        "SELECT \(unescaped: sessionColumns) FROM sessions WHERE id = ANY(\(ids)) AND project_id = \(projectID)"
    }

    public func sessions(projectID: String, ids: [String]) async throws -> [SessionRecord] {
        guard !ids.isEmpty else { return [] }
        let (logger, select) = (logger, Self.sessionsStatement(projectID: projectID, ids: ids))
        let found = try await statement { client in try await client.rows(select, logger: logger).map(Self.session) }
        let byID = Dictionary(found.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var seen = Set<String>()
        return ids.compactMap { seen.insert($0).inserted ? byID[$0] : nil }
    }

    /// The statements of the overview's counts: profiles by kind, blocked profiles, live sessions
    /// (see ``SQLiteStore/countStatements(projectID:now:)``).
    static func countStatements(projectID: String, now: Int64) -> [PostgresQuery] {
        [
            "SELECT kind, COUNT(*) FROM profiles WHERE project_id = \(projectID) GROUP BY kind",
            "SELECT COUNT(*) FROM profiles WHERE project_id = \(projectID) AND blocked_at IS NOT NULL",
            """
            SELECT COUNT(*) FROM sessions WHERE expires_at > \(now) AND project_id = \(projectID)
                AND revoked_at IS NULL
            """,
        ]
    }

    public func projectCounts(projectID: String, now: Int64) async throws -> ProjectCounts {
        let (logger, statements) = (logger, Self.countStatements(projectID: projectID, now: now))
        return try await transaction { connection in
            var counts = ProjectCounts(
                profiles: 0, anonymousProfiles: 0, identifiedProfiles: 0, blockedProfiles: 0, liveSessions: 0)
            for row in try await connection.rows(statements[0], logger: logger) {
                let count = Int(try row.int(1))
                counts.profiles += count
                switch ProfileRecord.Kind(rawValue: try row.text(0)) {
                case .anonymous: counts.anonymousProfiles += count
                case .identified: counts.identifiedProfiles += count
                case nil: break
                }
            }
            counts.blockedProfiles = Int(try await connection.first(statements[1], logger: logger)?.int(0) ?? 0)
            counts.liveSessions = Int(try await connection.first(statements[2], logger: logger)?.int(0) ?? 0)
            return counts
        }
    }

    /// The plan PostgreSQL chooses for `query` with sequential scans discouraged (`enable_seqscan =
    /// off`, so a tiny test table does not make a scan the cheapest plan): the lines of `EXPLAIN`.
    func queryPlan(_ query: PostgresQuery) async throws -> [String] {
        let logger = logger
        return try await transaction { connection in
            try await connection.rows("SET LOCAL enable_seqscan = off", logger: logger)
            var explain = query
            explain.sql = "EXPLAIN " + query.sql
            return try await connection.rows(explain, logger: logger).map { try $0.text(0) }
        }
    }
}
