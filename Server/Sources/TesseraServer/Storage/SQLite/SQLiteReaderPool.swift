import Logging
import Synchronization

/// Read-only connections handed to one caller at a time; in WAL mode they read while the writer writes.
///
/// Reads are short indexed lookups, so they run inline on the caller's thread rather than hopping
/// to another thread and back.
final class SQLiteReaderPool: Sendable {
    private let path: String
    private let busyTimeoutMilliseconds: Int32
    private let idle = Mutex<[SQLiteConnection]>([])
    private let maximumIdle: Int
    private let logger: Logger

    init(path: String, busyTimeoutMilliseconds: Int32, maximumIdle: Int = 16, logger: Logger) {
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.maximumIdle = maximumIdle
        self.logger = logger
    }

    /// Runs `body` with a connection of its own, in one implicit read transaction per statement;
    /// a failure of the database is thrown as ``CoreError/unavailable``.
    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        do {
            return try TraceScope.database("read", system: "sqlite") { try readOnConnection(body) }
        } catch {
            throw SQLiteFailure.surfaced(error, logger: logger)
        }
    }

    private func readOnConnection<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        let connection =
            try idle.withLock { $0.popLast() }
            ?? SQLiteConnection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, queryOnly: true)
        defer {
            let extra = idle.withLock { idle -> SQLiteConnection? in
                guard idle.count < maximumIdle else { return connection }
                idle.append(connection)
                return nil
            }
            extra?.close()
        }
        return try body(connection)
    }

    /// Runs `body` inside one read transaction, so several statements see one snapshot.
    func snapshot<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try read { connection in
            try connection.execute("BEGIN")
            defer { try? connection.execute("COMMIT") }
            return try body(connection)
        }
    }

    /// Closes the idle connections.
    func close() {
        let connections = idle.withLock { idle -> [SQLiteConnection] in
            defer { idle = [] }
            return idle
        }
        for connection in connections { connection.close() }
    }
}
