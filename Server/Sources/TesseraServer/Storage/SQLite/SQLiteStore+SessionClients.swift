extension SQLiteStore {
    @discardableResult
    public func recordSessionClients(_ clients: [(sessionID: String, client: SessionClient)]) async throws -> Int {
        guard !clients.isEmpty else { return 0 }
        return try await writer.write { connection in
            var written = 0
            for (id, client) in clients {
                // A row already holding this client is left as it is: no write.
                written += try connection.run(
                    """
                    UPDATE sessions SET client_address = ?, user_agent = ?
                    WHERE id = ? AND (client_address IS NOT ? OR user_agent IS NOT ?)
                    """,
                    [
                        .init(client.address), .init(client.userAgent), .init(id), .init(client.address),
                        .init(client.userAgent),
                    ])
            }
            return written
        }
    }

    public func sessionClients(ids: [String]) async throws -> [String: SessionClient] {
        guard !ids.isEmpty else { return [:] }
        let marks = Array(repeating: "?", count: ids.count).joined(separator: ", ")
        return try readers.read { connection in
            var found: [String: SessionClient] = [:]
            for row in try connection.query(
                "SELECT id, client_address, user_agent FROM sessions WHERE id IN (\(marks)) AND client_address IS NOT NULL",
                ids.map { .init($0) })
            {
                found[row.text(0)] = SessionClient(address: row.text(1), userAgent: row.optionalText(2))
            }
            return found
        }
    }
}
