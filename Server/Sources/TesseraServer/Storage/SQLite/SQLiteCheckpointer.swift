import Dispatch
import Foundation
import Synchronization

/// Copies the WAL back into the database file on a thread of its own.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses its threshold, so one write in
/// every few dozen batches also waited for the checkpoint's copy and the database file's `fsync`,
/// and every request queued behind that batch waited with it. Here the writer only counts commits;
/// this thread runs a `PASSIVE` checkpoint (which never blocks the writer or readers) after every
/// `commitsPerCheckpoint` commits, or once a second when there were any. Durability does not
/// depend on it: a committed transaction is in the WAL, `fsync`ed, before the writer answers.
///
/// The WAL file keeps the size it grew to (SQLite reuses it from the start once a checkpoint has
/// copied everything); the writer does not truncate it, because the truncation of a large file
/// stalled the commit that did it. When a second passes without a commit and the file is larger
/// than `walSizeLimit`, this thread truncates it with a `TRUNCATE` checkpoint instead (a write that
/// arrives meanwhile waits for it, up to the busy timeout). After such a quiet second the thread
/// sleeps without a timeout until the next commit wakes it, so an idle server does not wake it.
final class SQLiteCheckpointer: Sendable {
    private let connection: SQLiteConnection
    private let commitsPerCheckpoint: Int
    private let walSizeLimit: Int
    private let commits = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    /// The thread sleeps until the next commit (nothing was committed for a second).
    private let parked = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Opens a connection to the database of `writer` and starts the thread.
    init(like writer: SQLiteConnection, commitsPerCheckpoint: Int = 64, walSizeLimit: Int = 64 << 20) throws {
        connection = try SQLiteConnection(
            path: writer.path, busyTimeoutMilliseconds: writer.busyTimeoutMilliseconds, queryOnly: false)
        self.commitsPerCheckpoint = commitsPerCheckpoint
        self.walSizeLimit = walSizeLimit
        let thread = Thread { [self] in self.loop() }
        thread.name = "tessera-sqlite-checkpoint"
        thread.start()
    }

    /// Called by the writer after each commit.
    func committed() {
        let count = commits.add(1, ordering: .sequentiallyConsistent).newValue
        if count == commitsPerCheckpoint
            || (parked.load(ordering: .relaxed) && parked.exchange(false, ordering: .sequentiallyConsistent))
        {
            wake.signal()
        }
    }

    /// Runs a last checkpoint, truncating the WAL, and stops the thread.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiring) else { return }
        wake.signal()
        finished.wait()
        try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.close()
    }

    private func loop() {
        var quiet = false
        while true {
            if quiet {
                // Parked: the next commit (or `stop()`) signals. A commit counted before the flag was
                // set is seen here; one counted after it sees the flag and signals.
                parked.store(true, ordering: .sequentiallyConsistent)
                if commits.load(ordering: .sequentiallyConsistent) == 0 { wake.wait() }
                parked.store(false, ordering: .sequentiallyConsistent)
            } else {
                _ = wake.wait(timeout: .now() + .seconds(1))
            }
            if stopped.load(ordering: .acquiring) {
                finished.signal()
                return
            }
            guard commits.exchange(0, ordering: .sequentiallyConsistent) > 0 else {
                if walSize() > walSizeLimit { try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
                quiet = true
                continue
            }
            quiet = false
            try? connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
        }
    }

    /// The size of the WAL file in bytes (0 when there is none).
    private func walSize() -> Int {
        let attributes = try? FileManager.default.attributesOfItem(atPath: connection.path + "-wal")
        return (attributes?[.size] as? NSNumber)?.intValue ?? 0
    }
}
