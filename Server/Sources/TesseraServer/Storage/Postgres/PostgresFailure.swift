import PostgresNIO

/// What a PostgreSQL error means to the store: a lost race to run again, a taken unique key, or
/// an unavailable database.
enum PostgresFailure {
    /// A transaction that lost a race and may simply be run again.
    case retry
    /// A unique key that another row already holds (its constraint name).
    case uniqueViolation(constraint: String)
    /// Anything else: the database is unreachable, shutting down, or failed.
    case unavailable

    init(_ error: any Error) {
        guard let error = error as? PSQLError else {
            self = .unavailable
            return
        }
        guard error.code == .server, let state = error.serverInfo?[.sqlState] else {
            self = .unavailable
            return
        }
        switch state {
        case "40001", "40P01":  // serialization_failure, deadlock_detected
            self = .retry
        case "23505":  // unique_violation
            self = .uniqueViolation(constraint: error.serverInfo?[.constraintName] ?? "")
        default:
            self = .unavailable
        }
    }

    /// The SQLSTATE of a server error, for logs (never the query or its parameters).
    static func summary(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return String(describing: type(of: error)) }
        if error.code == .server {
            return "server error \(error.serverInfo?[.sqlState] ?? "?"): \(error.serverInfo?[.message] ?? "")"
        }
        return "\(error.code)"
    }
}

/// The error thrown when an operation outlives ``PostgresConfiguration/operationTimeout``.
struct PostgresTimeout: Error {}
