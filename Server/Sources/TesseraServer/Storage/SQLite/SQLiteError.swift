/// A failure reported by the SQLite library.
struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The extended result code.
    var code: Int32
    var message: String

    /// The primary result code (`SQLITE_CONSTRAINT`, `SQLITE_BUSY`, …).
    var primaryCode: Int32 { code & 0xff }

    var isConstraintViolation: Bool { primaryCode == 19 }
    var isUniqueViolation: Bool { code == 2067 || code == 1555 }  // SQLITE_CONSTRAINT_UNIQUE, _PRIMARYKEY

    var description: String { "SQLite error \(code): \(message)" }
}
