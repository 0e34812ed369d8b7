import PostgresNIO

extension PostgresStore {
    @discardableResult
    public func recordSessionClients(_ clients: [(sessionID: String, client: SessionClient)]) async throws -> Int {
        guard !clients.isEmpty else { return 0 }
        // In session ID order: two nodes writing at once lock the same rows in the same order. A row
        // already holding this client is left as it is: no new row version.
        let sorted = clients.sorted { $0.sessionID < $1.sessionID }
        let (logger, ids) = (logger, sorted.map(\.sessionID))
        let addresses = sorted.map(\.client.address)
        let agents = sorted.map { $0.client.userAgent ?? "" }  // "" for none: NULLIF below
        return try await statement { client in
            try await client.rows(
                """
                UPDATE sessions s SET client_address = u.address, user_agent = u.agent
                FROM (
                    SELECT id, address, NULLIF(agent, '') AS agent
                    FROM unnest(\(ids)::text[], \(addresses)::text[], \(agents)::text[]) AS a(id, address, agent)
                ) u
                WHERE s.id = u.id
                    AND (s.client_address IS DISTINCT FROM u.address OR s.user_agent IS DISTINCT FROM u.agent)
                RETURNING s.id
                """, logger: logger
            ).count
        }
    }

    public func sessionClients(ids: [String]) async throws -> [String: SessionClient] {
        guard !ids.isEmpty else { return [:] }
        let logger = logger
        return try await statement { client in
            var found: [String: SessionClient] = [:]
            for row in try await client.rows(
                """
                SELECT id, client_address, user_agent FROM sessions
                WHERE id = ANY(\(ids)) AND client_address IS NOT NULL
                """, logger: logger)
            {
                found[try row.text(0)] = SessionClient(address: try row.text(1), userAgent: try row.optionalText(2))
            }
            return found
        }
    }
}
