import Foundation

/// Where the installation's App Attest key ID is kept: the credential store, beside the state and the
/// device key, so that the app and its extensions (sharing the store) use one key.
///
/// The first write of an installation's key is add-only, as the device key's is: another process of
/// the installation may have made one just now, and then that one is the installation's key. A key of
/// another installation (the installation was replaced) is overwritten.
struct AppAttestKeyring: Sendable {
    let store: any CredentialStore
    /// Where the record is kept in the store.
    let storageKey: String

    init(configuration: TesseraConfiguration) {
        store = configuration.credentialStore
        storageKey = configuration.storageKey + "-app-attest"
    }

    /// The stored form of the installation's key.
    struct Record: Codable, Equatable, Sendable {
        var version = 1
        /// The installation the key was made for (lower-case UUID).
        var installationID: String
        /// The key ID `generateKey` answered.
        var keyID: String
        /// Whether a start the server accepted carried its attestation.
        var attested: Bool
    }

    /// The stored record; nil when none is stored or it cannot be read for good (a new key is made then).
    /// - Throws: When the store cannot be read now: nothing is made on an ambiguous read.
    func load() throws(CredentialStoreError) -> Record? {
        let data: Data?
        do {
            data = try store.load(storageKey)
        } catch {
            if case .corrupted = error { return nil }
            throw error
        }
        guard let data, let record = try? JSONDecoder().decode(Record.self, from: data), record.version == 1
        else { return nil }
        return record
    }

    /// Stores a new key of `installationID`; add-only when `replacing` is nil (nothing was stored).
    /// - Returns: The record now stored: `record`, or the one another process stored first.
    func store(_ record: Record, replacing previous: Record?) throws(CredentialStoreError) -> Record {
        let data = Self.encode(record)
        guard previous == nil else {
            try store.save(data, for: storageKey)
            return record
        }
        guard let existing = try store.create(data, for: storageKey) else { return record }
        guard let theirs = try? JSONDecoder().decode(Record.self, from: existing), theirs.version == 1,
            theirs.installationID == record.installationID
        else {
            try store.save(data, for: storageKey)
            return record
        }
        return theirs
    }

    /// Records that the server accepted the attestation of `keyID` for `installationID` (when that key
    /// is still the stored one).
    func markAttested(keyID: String, installationID: String) throws(CredentialStoreError) {
        guard var record = try load(), record.keyID == keyID, record.installationID == installationID,
            !record.attested
        else { return }
        record.attested = true
        try store.save(Self.encode(record), for: storageKey)
    }

    /// Forgets `keyID` (when it is still the stored one): the next start makes and attests a new key.
    func forget(keyID: String) throws(CredentialStoreError) {
        guard let record = try load(), record.keyID == keyID else { return }
        try store.remove(storageKey)
    }

    private static func encode(_ record: Record) -> Data {
        // A struct of strings and a flag always encodes.
        (try? JSONEncoder().encode(record)) ?? Data()
    }
}
