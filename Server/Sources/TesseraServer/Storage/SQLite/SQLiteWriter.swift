import Dispatch
import Foundation
import Logging
import Synchronization

/// The one writer of an SQLite database: a dedicated thread that runs write jobs in order.
///
/// Jobs that arrive while a transaction commits are grouped into the next transaction, each in its
/// own savepoint (group commit): a job that fails rolls back only its savepoint, and every
/// successful job is answered only after the shared `COMMIT` returned. With `synchronous=FULL`
/// a commit costs one `fsync`, so grouping is what lets many writers share it.
final class SQLiteWriter: Sendable {
    private struct Job: Sendable {
        let run: @Sendable (SQLiteConnection) throws -> @Sendable () -> Void
        let fail: @Sendable (any Error) -> Void
    }

    private struct State: ~Copyable {
        var pending: [Job] = []
        var stopped = false
    }

    private let connection: SQLiteConnection
    private let state = Mutex(State())
    private let signal = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let maximumBatch: Int
    private let checkpointer: SQLiteCheckpointer?
    private let logger: Logger
    /// Where the events of committed jobs are counted.
    let eventTally = EventTally()
    /// Raised after each commit that wrote events (the webhook dispatcher waits on it).
    let eventSignal = EventSignal()

    /// - Parameters:
    ///   - connection: the read-write connection this writer owns.
    ///   - maximumBatch: the most jobs grouped into one transaction.
    ///   - checkpointInBackground: copy the WAL back into the database on a thread of its own
    ///     instead of inside the commit that crosses SQLite's auto-checkpoint threshold.
    ///   - logger: where failures of the database are reported.
    init(
        connection: SQLiteConnection, maximumBatch: Int = 256, checkpointInBackground: Bool = true,
        logger: Logger
    ) {
        self.connection = connection
        self.logger = logger
        self.maximumBatch = maximumBatch
        if checkpointInBackground, let checkpointer = try? SQLiteCheckpointer(like: connection) {
            // The writer never checkpoints itself, and never shrinks the WAL file either: truncating a
            // WAL that had grown to a few hundred megabytes took 100–200 ms in the commit that reset it,
            // a stall for every write queued behind it. The checkpointer shrinks it when writes pause.
            try? connection.execute("PRAGMA wal_autocheckpoint = 0")
            try? connection.execute("PRAGMA journal_size_limit = -1")
            self.checkpointer = checkpointer
        } else {
            self.checkpointer = nil
        }
        let thread = Thread { [self] in self.loop() }
        thread.name = "tessera-sqlite-writer"
        thread.start()
    }

    /// How many jobs wait for the writer (tests see a write queued behind another with it).
    var queuedJobs: Int { state.withLock { $0.pending.count } }

    /// Runs `body` in a write transaction and returns its value once the transaction committed; a
    /// failure of the database is thrown as ``CoreError/unavailable``.
    func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        let logger = logger
        guard TraceScope.tracer != nil else { return try await enqueue(body, traceContext: nil, logger: logger) }
        return try await TraceScope.database("write", system: "sqlite") {
            try await enqueue(body, traceContext: TraceScope.traceContext, logger: logger)
        }
    }

    /// Queues `body` for the writer thread, which writes `traceContext` with its events.
    private func enqueue<T: Sendable>(
        _ body: @escaping @Sendable (SQLiteConnection) throws -> T, traceContext: String?, logger: Logger
    ) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = Job(
                run: { connection in
                    connection.traceContext = traceContext
                    defer { connection.traceContext = nil }
                    let value = try body(connection)
                    return { continuation.resume(returning: value) }
                },
                fail: { continuation.resume(throwing: SQLiteFailure.surfaced($0, logger: logger)) }
            )
            let accepted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.pending.append(job)
                return true
            }
            if accepted {
                signal.signal()
            } else {
                continuation.resume(
                    throwing: SQLiteFailure.surfaced(
                        SQLiteError(code: 21, message: "the database is closed"), logger: logger))
            }
        }
    }

    /// Finishes the queued jobs and stops the thread.
    func stop() {
        let wasRunning = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard wasRunning else { return }
        signal.signal()
        finished.wait()
        checkpointer?.stop()
        connection.close()
    }

    private func loop() {
        while true {
            signal.wait()
            while true {
                let (jobs, stopped) = state.withLock { state -> ([Job], Bool) in
                    let count = min(state.pending.count, maximumBatch)
                    let jobs = Array(state.pending.prefix(count))
                    state.pending.removeFirst(count)
                    return (jobs, state.stopped)
                }
                if jobs.isEmpty {
                    if stopped {
                        finished.signal()
                        return
                    }
                    break
                }
                runBatch(jobs)
            }
        }
    }

    /// Transaction control goes through `run`, i.e. statements prepared once, not parsed per job.
    private func runBatch(_ jobs: [Job]) {
        do {
            try connection.run("BEGIN IMMEDIATE")
        } catch {
            for job in jobs { job.fail(error) }
            return
        }
        var succeeded: [(job: Job, complete: @Sendable () -> Void)] = []
        var events: [EventType] = []
        for job in jobs {
            connection.appendedEvents = []
            do {
                try connection.run("SAVEPOINT job")
                let complete = try job.run(connection)
                try connection.run("RELEASE job")
                succeeded.append((job, complete))
                events += connection.appendedEvents
            } catch {
                _ = try? connection.run("ROLLBACK TO job")
                _ = try? connection.run("RELEASE job")
                job.fail(error)
            }
        }
        do {
            try connection.run("COMMIT")
            eventTally.add(events)
            if !events.isEmpty { eventSignal.raise() }
            for entry in succeeded { entry.complete() }
            checkpointer?.committed()
        } catch {
            _ = try? connection.run("ROLLBACK")
            for entry in succeeded { entry.job.fail(error) }
        }
    }
}
