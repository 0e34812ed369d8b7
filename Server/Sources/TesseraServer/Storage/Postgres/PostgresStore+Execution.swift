import Logging
import PostgresNIO
import Synchronization

extension PostgresStore {
    /// Unique keys that two nodes can race for; a transaction that lost such a race is run again and
    /// then finds the winner's row.
    static let racedConstraints: Set<String> = ["profiles_external_id", "installations_pkey", "devices_token"]

    /// The error while the database cannot be reached: the core's ``CoreError/unavailable``.
    static let unavailable = CoreError.unavailable

    /// Runs `body` in one transaction, within the operation timeout, again when it lost a race.
    ///
    /// Domain errors (``CoreError``) thrown by `body` roll the transaction back and pass through;
    /// connection failures and timeouts become ``CoreError/unavailable``.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T
    {
        try await TraceScope.database("transaction", system: "postgresql") { try await runTransaction(body) }
    }

    private func runTransaction<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await retrying {
            // The events of this attempt, counted only once it committed (a retried attempt rolled back).
            let collector = EventCollector()
            let value = try await EventCollector.$current.withValue(collector) {
                try await self.client.withTransaction(logger: self.logger) { connection in
                    try await body(connection)
                }
            }
            let appended = collector.collected
            if !appended.isEmpty {
                self.eventTally.add(appended)
                self.sequencerSignal.yield()
                self.eventSignal.raise()
            }
            return value
        }
    }

    /// Runs one statement (or a read) on a pooled connection, within the operation timeout.
    func statement<T: Sendable>(_ body: @escaping @Sendable (PostgresClient) async throws -> T) async throws -> T {
        try await TraceScope.database("statement", system: "postgresql") {
            try await retrying { try await body(self.client) }
        }
    }

    private func retrying<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await Self.retrying(maximumRetries: configuration.maximumRetries, logger: logger) {
            try await self.withTimeout(body)
        }
    }

    /// Runs `attempt` again while it lost a race (at most `maximumRetries` times); domain errors
    /// (``CoreError``, ``MigrationError``) pass through, everything else becomes ``CoreError/unavailable``.
    static func retrying<T: Sendable>(
        maximumRetries: Int, logger: Logger, _ attempt: @Sendable () async throws -> T
    ) async throws -> T {
        var attempts = 0
        while true {
            do {
                return try await attempt()
            } catch {
                let cause = Self.cause(of: error)
                if let error = cause as? CoreError { throw error }
                // A migration refused for the releases involved: the caller's answer, not a failure.
                if let error = cause as? MigrationError { throw error }
                if cause is PostgresTimeout || cause is CancellationError {
                    logger.warning("database operation timed out or was cancelled")
                    throw unavailable
                }
                switch PostgresFailure(cause) {
                case .retry where attempts < maximumRetries:
                    attempts += 1
                    continue
                case .uniqueViolation(let constraint)
                where racedConstraints.contains(constraint) && attempts < maximumRetries:
                    attempts += 1
                    continue
                case .unavailable, .retry, .uniqueViolation:
                    logger.error("database error", metadata: ["error": "\(PostgresFailure.summary(cause))"])
                    throw unavailable
                }
            }
        }
    }

    /// Runs `body`, but answers ``PostgresTimeout`` after the operation timeout even when `body` is
    /// stuck on a connection that died without a word (it is left to finish alone; the pool's
    /// keep-alive and the closed socket end it eventually).
    private func withTimeout<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let deadline = ContinuousClock.now + configuration.operationTimeout
        let watchdog = watchdog
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let pending = Mutex<CheckedContinuation<T, any Error>?>(continuation)
            let finish: @Sendable (Result<T, any Error>) -> Void = { result in
                let continuation = pending.withLock { value in
                    defer { value = nil }
                    return value
                }
                continuation?.resume(with: result)
            }
            let id = watchdog.register(deadline: deadline) { finish(.failure(PostgresTimeout())) }
            Task {
                let result: Result<T, any Error>
                do { result = .success(try await body()) } catch { result = .failure(error) }
                watchdog.finish(id)
                finish(result)
            }
        }
    }

    /// The error a transaction's closure, `BEGIN` or `COMMIT` threw.
    static func cause(of error: any Error) -> any Error {
        guard let error = error as? PostgresTransactionError else { return error }
        return error.closureError ?? error.commitError ?? error.beginError ?? error.rollbackError ?? error
    }

    /// Whether `error` is a unique violation of `constraint`.
    static func isUniqueViolation(_ error: any Error, constraint: String) -> Bool {
        if case .uniqueViolation(let name) = PostgresFailure(error) { return name == constraint }
        return false
    }
}

/// Where a store's statements run: a transaction's connection or the client's pool, read the same way.
protocol PostgresStatementRunner {
    /// Runs a query, answering its rows as they arrive.
    func rowSequence(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence
}

extension PostgresStatementRunner {
    /// Runs a query and collects its rows.
    @discardableResult
    func rows(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresCells] {
        try await rowSequence(query, logger: logger).collect().map(PostgresCells.init)
    }

    /// Runs a query and returns its first row.
    func first(_ query: PostgresQuery, logger: Logger) async throws -> PostgresCells? {
        try await rows(query, logger: logger).first
    }
}

extension PostgresConnection: PostgresStatementRunner {
    func rowSequence(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        try await self.query(query, logger: logger)
    }
}

extension PostgresClient: PostgresStatementRunner {
    func rowSequence(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        try await self.query(query, logger: logger)
    }
}
