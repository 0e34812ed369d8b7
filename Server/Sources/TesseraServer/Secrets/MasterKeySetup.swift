import Foundation

/// The master keys a configuration names, read from their files.
public struct MasterKeySetup: Sendable {
    /// The keys: the current one, then the previous ones.
    public let keyring: MasterKeyring
    /// The file of the current key; nil for keys given directly.
    public let file: String?
    /// The file does not exist yet and is created (SQLite, no key configured) once the database
    /// is known to hold no value sealed under another key.
    public let needsCreating: Bool

    /// Reads the keys: `keys` when given directly, else the current key's file, else (SQLite only)
    /// `master.key` beside the database, created on first start.
    ///
    /// - Parameters:
    ///   - keys: keys given directly (tests, embedding); the files are then not read.
    ///   - file: the current key's file.
    ///   - previousFiles: the previous keys' files, which still open what they sealed.
    ///   - sqlitePath: the SQLite database's path, when the database is SQLite: without a file,
    ///     its key lives beside it. PostgreSQL (nil) needs a file every node shares.
    public init(
        keys: MasterKeyring?, file: String?, previousFiles: [String], sqlitePath: String?
    ) throws(MasterKeyError) {
        if let keys {
            keyring = keys
            self.file = nil
            needsCreating = false
            return
        }
        let previous = try previousFiles.map { path throws(MasterKeyError) in try MasterKey.load(path: path) }
        if let path = file {
            keyring = MasterKeyring(current: try MasterKey.load(path: path), previous: previous)
            self.file = path
            needsCreating = false
            return
        }
        guard let databasePath = sqlitePath else {
            throw .missing(
                "PostgreSQL needs a master key that every node shares: pass --master-key-file PATH or set TESSERA_MASTER_KEY_FILE (create one with `tessera keys generate --to PATH`)"
            )
        }
        let path = Self.defaultFile(databasePath: databasePath)
        let exists = FileManager.default.fileExists(atPath: path)
        keyring = MasterKeyring(current: exists ? try MasterKey.load(path: path) : .generate(), previous: previous)
        self.file = path
        needsCreating = !exists
    }

    /// `master.key` in the directory of an SQLite database.
    public static func defaultFile(databasePath: String) -> String {
        let directory = (databasePath as NSString).deletingLastPathComponent
        return directory.isEmpty ? "master.key" : (directory as NSString).appendingPathComponent("master.key")
    }
}
