import CTesseraSQLite
import VaporCSQLite

private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One `sqlite3` handle with a cache of prepared statements.
///
/// A connection is used by one thread at a time: the writer owns its connection, and the reader
/// pool hands each connection to one caller at a time. That confinement is why this one small
/// type is `@unchecked Sendable`.
final class SQLiteConnection: @unchecked Sendable {
    private var handle: OpaquePointer?
    /// The database file this connection opened.
    let path: String
    /// The busy timeout this connection was opened with.
    let busyTimeoutMilliseconds: Int32
    /// The event types the current write job appended (the writer's thread only): counted in the
    /// store's ``EventTally`` when the job's transaction commits.
    nonisolated(unsafe) var appendedEvents: [EventType] = []
    /// The trace context of the write job running (``TraceScope/traceContext``), kept with its events.
    nonisolated(unsafe) var traceContext: String?
    private var statements: [String: OpaquePointer] = [:]

    /// Opens (and creates) the database file at `path` and applies the connection pragmas.
    init(path: String, busyTimeoutMilliseconds: Int32, queryOnly: Bool) throws(SQLiteError) {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        let status = sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.flatMap { sqlite_nio_sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "cannot open"
            sqlite_nio_sqlite3_close(handle)
            throw SQLiteError(code: status, message: message)
        }
        self.handle = handle
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        sqlite_nio_sqlite3_extended_result_codes(handle, 1)
        sqlite_nio_sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        // Cached statements keep their plan: without this SQLite re-prepares a statement whenever a
        // parameter it considers plan-relevant is rebound, i.e. on almost every query.
        let qpsg = tessera_sqlite_enable_qpsg(UnsafeMutableRawPointer(handle))
        guard qpsg == SQLITE_OK else { throw error(qpsg) }
        try execute("PRAGMA foreign_keys = ON")
        try execute("PRAGMA synchronous = FULL")
        // Savepoint journals (one per write job of a batch) and temporary b-trees in memory: in a
        // file they cost a write system call for every page a job changes.
        try execute("PRAGMA temp_store = MEMORY")
        // Pages read through a memory map of the file rather than a `pread` into the connection's own
        // 2 MiB page cache: a heartbeat's session lookup lands on pages of a database far larger than
        // that cache, and each miss cost a system call and a copy (profiled: 6 % of the heartbeat's
        // CPU in `pread`). Writes still go through `write` (SQLite writes a mapping only when built
        // with SQLITE_MMAP_READWRITE). The mapped pages are the kernel's page cache, shared by every
        // connection, counted in RSS as file pages, never as the process's own memory.
        try execute("PRAGMA mmap_size = \(Self.mappedBytes)")
        if queryOnly {
            try execute("PRAGMA query_only = ON")
        }
    }

    /// The most of the database file a connection maps: SQLite's own compile-time ceiling on 64-bit
    /// Linux (`SQLITE_MAX_MMAP_SIZE`, 0x7fff0000, about 2 GiB); past it pages are read as before. A
    /// mapping is address space, not memory: the kernel keeps only the pages read, and drops them
    /// under pressure as any file cache.
    static let mappedBytes: Int64 = 0x7fff_0000

    deinit {
        close()
    }

    /// Finalizes every statement and closes the handle.
    func close() {
        for statement in statements.values {
            sqlite_nio_sqlite3_finalize(statement)
        }
        statements = [:]
        if let handle {
            sqlite_nio_sqlite3_close_v2(handle)
        }
        handle = nil
    }

    private func error(_ status: Int32) -> SQLiteError {
        let message = handle.flatMap { sqlite_nio_sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "closed"
        return SQLiteError(
            code: sqlite_nio_sqlite3_extended_errcode(handle), message: message.isEmpty ? "\(status)" : message)
    }

    /// Runs one or more statements without parameters or results.
    func execute(_ sql: String) throws(SQLiteError) {
        let status = sqlite_nio_sqlite3_exec(handle, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw error(status) }
    }

    /// The number of rows the last statement changed.
    var changes: Int { Int(sqlite_nio_sqlite3_changes(handle)) }

    private func statement(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        if let cached = statements[sql] {
            return cached
        }
        var statement: OpaquePointer?
        let status = sqlite_nio_sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw error(status) }
        statements[sql] = statement
        return statement
    }

    /// Runs a statement and returns every row it yields.
    @discardableResult
    func query(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) -> [SQLiteRow] {
        let statement = try statement(sql)
        defer {
            sqlite_nio_sqlite3_reset(statement)
            sqlite_nio_sqlite3_clear_bindings(statement)
        }
        for (offset, value) in bindings.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .null:
                status = sqlite_nio_sqlite3_bind_null(statement, index)
            case .integer(let number):
                status = sqlite_nio_sqlite3_bind_int64(statement, index, number)
            case .text(let text):
                status = sqlite_nio_sqlite3_bind_text64(
                    statement, index, text, UInt64(text.utf8.count), transientDestructor, UInt8(SQLITE_UTF8))
            case .blob(let bytes):
                status = bytes.withUnsafeBytes {
                    sqlite_nio_sqlite3_bind_blob64(
                        statement, index, $0.baseAddress, UInt64($0.count), transientDestructor)
                }
            }
            guard status == SQLITE_OK else { throw error(status) }
        }
        var rows: [SQLiteRow] = []
        let columnCount = sqlite_nio_sqlite3_column_count(statement)
        while true {
            let status = sqlite_nio_sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw error(status) }
            var values: [SQLiteValue] = []
            values.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                switch sqlite_nio_sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER:
                    values.append(.integer(sqlite_nio_sqlite3_column_int64(statement, column)))
                case SQLITE_TEXT:
                    let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
                    if let pointer = sqlite_nio_sqlite3_column_text(statement, column) {
                        let buffer = UnsafeBufferPointer(start: pointer, count: count)
                        values.append(.text(String(decoding: buffer, as: UTF8.self)))
                    } else {
                        values.append(.text(""))
                    }
                case SQLITE_BLOB:
                    let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
                    if let pointer = sqlite_nio_sqlite3_column_blob(statement, column) {
                        let buffer = UnsafeRawBufferPointer(start: pointer, count: count)
                        values.append(.blob(Array(buffer)))
                    } else {
                        values.append(.blob([]))
                    }
                case SQLITE_FLOAT:
                    values.append(.integer(Int64(sqlite_nio_sqlite3_column_double(statement, column))))
                default:
                    values.append(.null)
                }
            }
            rows.append(SQLiteRow(values: values))
        }
        return rows
    }

    /// Runs a statement and returns its first row, if any.
    func queryFirst(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) -> SQLiteRow? {
        try query(sql, bindings).first
    }

    /// Runs a statement that yields no rows and returns the number of rows it changed.
    @discardableResult
    func run(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) -> Int {
        try query(sql, bindings)
        return changes
    }
}
