import Logging

/// What the SQLite store throws for a failure: core errors as they are, and any failure of the
/// database itself as ``CoreError/unavailable`` (its detail is logged here, never answered).
enum SQLiteFailure {
    static func surfaced(_ error: any Error, logger: Logger) -> any Error {
        guard let error = error as? SQLiteError else { return error }
        logger.error("database error", metadata: ["error": "\(error)"])
        return CoreError.unavailable
    }
}
