import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension SQLiteStore {
    public func allProjects() async throws -> [ProjectRecord] {
        try readers.read {
            try $0.query("SELECT \(Self.projectColumns) FROM projects ORDER BY created_at, id").map(Self.project)
        }
    }

    /// Writes a consistent copy of the database to a new file at `path` (`VACUUM INTO`), while the
    /// server keeps reading and writing; fails when `path` exists.
    ///
    /// The copy holds the secrets sealed, as the database does: restoring it needs the master key.
    public func backup(to path: String) async throws {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw ConfigurationError("\(path) exists; a backup never overwrites a file")
        }
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        // An empty file of mode 0600 first: VACUUM INTO fills an empty file, and the backup is as
        // private as the database.
        Self.createPrivateFile(path)
        // VACUUM cannot run inside the writer's group-commit transaction: a connection of its own
        // reads one snapshot of the WAL database and writes it out.
        let connection = try SQLiteConnection(path: self.path, busyTimeoutMilliseconds: 5000, queryOnly: false)
        defer { connection.close() }
        try connection.run("VACUUM INTO ?", [.init(path)])
    }

    /// Rewrites the database file and empties the WAL, so that no freed page or old WAL frame
    /// still holds a value that was replaced (the plaintext secrets of an older version).
    public func purgeReplacedValues() async throws {
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5000, queryOnly: false)
        defer { connection.close() }
        try connection.execute("VACUUM")
        _ = try connection.query("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// Creates `path` empty with mode 0600 when it does not exist (`:memory:` and URIs aside).
    static func createPrivateFile(_ path: String) {
        guard path != ":memory:", !path.hasPrefix("file:"), !FileManager.default.fileExists(atPath: path) else {
            return
        }
        #if canImport(Glibc)
            let descriptor = Glibc.open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
            if descriptor >= 0 { _ = Glibc.close(descriptor) }
        #elseif canImport(Darwin)
            let descriptor = Darwin.open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
            if descriptor >= 0 { _ = Darwin.close(descriptor) }
        #endif
    }
}
