import Foundation
import Testing

@testable import TesseraServer

@Suite("SQLite connections: checkpoints and the memory map")
struct SQLiteCheckpointerTests {
    /// The size of a file in bytes (0 when there is none).
    private func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// A database path in a directory of its own, removed after `body`.
    private func withDatabasePath(_ body: (String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-sqlite-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory.appendingPathComponent("test.sqlite").path)
    }

    @Test("The writer never truncates the WAL; the checkpointer shrinks it once writes pause")
    func truncatesWhenIdle() async throws {
        try await withDatabasePath { path in try await truncatesWhenIdle(path: path) }
    }

    private func truncatesWhenIdle(path: String) async throws {
        let writer = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000, queryOnly: false)
        try writer.execute("PRAGMA journal_mode = WAL")
        try writer.execute("PRAGMA wal_autocheckpoint = 0")
        try writer.execute("PRAGMA journal_size_limit = -1")
        try writer.execute("CREATE TABLE t (value BLOB)")
        let limit = 256 << 10
        let checkpointer = try SQLiteCheckpointer(like: writer, commitsPerCheckpoint: 1_000_000, walSizeLimit: limit)
        defer { checkpointer.stop() }

        // About a megabyte of commits, each reported to the checkpointer as the writer does.
        for _ in 0..<64 {
            _ = try writer.run("INSERT INTO t (value) VALUES (randomblob(16384))")
            checkpointer.committed()
        }
        let grown = size(path + "-wal")
        #expect(grown > limit)
        // The first wake-up sees commits and runs a passive checkpoint; the next one, a second
        // without commits, truncates the file.
        for _ in 0..<100 where size(path + "-wal") > limit {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(size(path + "-wal") <= limit)
        // Nothing was lost.
        let rows = try writer.queryFirst("SELECT count(*) FROM t")?.int(0)
        #expect(rows == 64)
    }

    @Test("Every connection, reader or writer, reads the database through a memory map")
    func connectionsMapTheFile() async throws {
        try await withDatabasePath { path in
            let writer = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000, queryOnly: false)
            try writer.execute("PRAGMA journal_mode = WAL")
            try writer.execute("CREATE TABLE t (value INTEGER)")
            let reader = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000, queryOnly: true)
            // SQLite answers the size in force (0 when mapping is off, or when the build forbids it).
            for connection in [writer, reader] {
                let mapped = try connection.queryFirst("PRAGMA mmap_size")?.int(0)
                #expect(mapped == SQLiteConnection.mappedBytes)
            }
        }
    }
}
