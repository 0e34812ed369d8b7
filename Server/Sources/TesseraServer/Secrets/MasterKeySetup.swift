import Foundation
public import Logging

/// The master keys a configuration names, read from their files.
public struct MasterKeySetup: Sendable {
    /// The keys: the current one, then the previous ones.
    public let keyring: MasterKeyring
    /// The file of the current key; nil for keys given directly.
    public let file: String?
    /// The file does not exist yet and is created (SQLite, no key configured) once the database
    /// is known to hold no value sealed under another key.
    public let needsCreating: Bool

    /// Reads the keys of `configuration`: ``ServerConfiguration/masterKeys``, else the files.
    public init(configuration: ServerConfiguration) throws(MasterKeyError) {
        if let keys = configuration.masterKeys {
            keyring = keys
            file = nil
            needsCreating = false
            return
        }
        let previous = try configuration.previousMasterKeyFiles.map { path throws(MasterKeyError) in
            try MasterKey.load(path: path)
        }
        if let path = configuration.masterKeyFile {
            keyring = MasterKeyring(current: try MasterKey.load(path: path), previous: previous)
            file = path
            needsCreating = false
            return
        }
        guard case .sqlite(let databasePath) = configuration.database else {
            throw .missing(
                "PostgreSQL needs a master key that every node shares: pass --master-key-file PATH or set TESSERA_MASTER_KEY_FILE (create one with `tessera keys generate --to PATH`)"
            )
        }
        let path = Self.defaultFile(databasePath: databasePath)
        let exists = FileManager.default.fileExists(atPath: path)
        keyring = MasterKeyring(current: exists ? try MasterKey.load(path: path) : .generate(), previous: previous)
        file = path
        needsCreating = !exists
    }

    /// `master.key` in the directory of an SQLite database.
    public static func defaultFile(databasePath: String) -> String {
        let directory = (databasePath as NSString).deletingLastPathComponent
        return directory.isEmpty ? "master.key" : (directory as NSString).appendingPathComponent("master.key")
    }
}

extension ServerConfiguration {
    /// Opens and migrates the database with the configured master keys, as `tessera serve` does:
    /// creates `master.key` beside an SQLite database on first start, seals the plaintext values of
    /// an older version, and refuses (`master_key_mismatch`) a database sealed under another key.
    /// Writes a new key file; false when another process created the file first.
    private static func createKeyFile(_ key: MasterKey, path: String) throws(MasterKeyError) -> Bool {
        do {
            try key.write(toNewFile: path)
            return true
        } catch {
            guard FileManager.default.fileExists(atPath: path) else { throw error }
            return false
        }
    }

    public func openStore(logger: Logger) async throws -> any TesseraStore {
        let setup = try MasterKeySetup(configuration: self)
        let store = try database.makeStore(masterKeys: setup.keyring)
        do {
            try await store.migrate()
            if setup.needsCreating, let path = setup.file {
                let foreign = Set(try await store.sealedCells().compactMap(\.sealedKeyID))
                if !foreign.isEmpty, FileManager.default.fileExists(atPath: path) {
                    // Another process created the key, and sealed with it, since this one looked.
                    try? await store.close()
                    return try await openStore(logger: logger)
                }
                guard foreign.isEmpty else {
                    throw MasterKeyError.missing(
                        "the database's secrets are sealed under master key \(foreign.sorted().joined(separator: ", ")), but \(path) does not exist: restore that key file, or pass --master-key-file PATH"
                    )
                }
                if try !Self.createKeyFile(setup.keyring.current, path: path) {
                    // Another process created it first: use that one.
                    try? await store.close()
                    return try await openStore(logger: logger)
                }
                logger.notice(
                    "Created the master key file \(path) (key \(setup.keyring.current.id), mode 0600). It seals the project secrets in the database: back it up apart from the database; without it they cannot be opened."
                )
            }
            for path in [setup.file].compactMap({ $0 }) + previousMasterKeyFiles
            where MasterKey.isExposed(path: path) {
                logger.warning("The master key file \(path) is readable by other users: chmod 600 it.")
            }
            let report = try await SecretResealer.sealPlaintextAndVerify(store: store)
            if report.sealedPlaintext > 0 {
                logger.notice(
                    "Sealed \(report.sealedPlaintext) plaintext secrets of an older version under master key \(setup.keyring.current.id)."
                )
            }
            return store
        } catch {
            try? await store.close()
            throw error
        }
    }
}
