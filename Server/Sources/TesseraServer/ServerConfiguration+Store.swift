import Foundation
public import Logging

extension MasterKeySetup {
    /// Reads the keys of `configuration`: ``ServerConfiguration/masterKeys``, else the files.
    public init(configuration: ServerConfiguration) throws(MasterKeyError) {
        var sqlitePath: String?
        if case .sqlite(let path) = configuration.database { sqlitePath = path }
        try self.init(
            keys: configuration.masterKeys, file: configuration.masterKeyFile,
            previousFiles: configuration.previousMasterKeyFiles, sqlitePath: sqlitePath)
    }
}

extension ServerConfiguration {
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

    /// Opens and migrates the database with the configured master keys, as `tessera serve` does:
    /// creates `master.key` beside an SQLite database on first start, seals the plaintext values of
    /// an older version, and refuses (`master_key_mismatch`) a database sealed under another key.
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
