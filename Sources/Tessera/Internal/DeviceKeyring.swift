import Foundation
import TesseraTokens

/// Every decision about this installation's device key, on every platform: which tier to make, where
/// its representation is kept (the credential store, beside the state), and what a missing or
/// unreadable key becomes. The ``DeviceKeyProvider`` only makes and restores keys.
///
/// Nothing is made on an ambiguous read: a store that cannot be read now throws (transient), as the
/// state's own read does. A key that is gone (nothing stored) or unreadable for good (undecodable, or
/// its provider cannot restore it) is replaced by a new one; the client then re-establishes the session
/// that was bound to the old key quietly (``TesseraClient/recoverFromKeyLoss()``).
struct DeviceKeyring: Sendable {
    let store: any CredentialStore
    /// Where the key's representation is kept in the store.
    let storageKey: String
    let provider: any DeviceKeyProvider

    init(configuration: TesseraConfiguration) {
        store = configuration.credentialStore
        storageKey = configuration.storageKey + "-device-key"
        provider = configuration.deviceKeyProvider
    }

    /// How the key was obtained.
    enum Origin: Equatable, Sendable {
        /// Restored from the store.
        case restored
        /// Made now: nothing was stored (a first launch, or a key that went missing).
        case created
        /// Made now: the stored key could not be used any more; it was moved aside.
        case replacedUnreadable
    }

    struct Loaded: Sendable {
        var key: any DeviceKey
        /// The key's RFC 7638 thumbprint (a session's `binding.jkt` when bound to it).
        var thumbprint: String
        var origin: Origin
    }

    /// The stored form of a key.
    struct Record: Codable, Equatable {
        var version = 1
        var tier: DeviceKeyTier
        var key: Data
    }

    /// The stored key, or a new one when none is stored or the stored one cannot be used.
    /// - Throws: `storage_unavailable`, `storage_access_denied` or `storage_misconfigured` when the store
    ///   cannot be read (nothing is made then); an error of the provider when no key can be made.
    func load() throws(TesseraError) -> Loaded {
        let data: Data?
        do {
            data = try store.load(storageKey)
        } catch {
            switch error {
            case .corrupted: return try replaceUnreadable()
            default: throw Self.storageError(error)
            }
        }
        guard let data else { return try create() }
        guard let record = try? JSONDecoder().decode(Record.self, from: data), record.version == 1,
            let key = try? provider.restoreKey(tier: record.tier, dataRepresentation: record.key)
        else { return try replaceUnreadable() }
        return Loaded(key: key, thumbprint: JWKThumbprint.sha256(of: key.publicKey), origin: .restored)
    }

    /// Removes the stored key (the next ``load()`` makes a new one).
    func remove() throws(TesseraError) {
        do { try store.remove(storageKey) } catch { throw Self.storageError(error) }
    }

    /// The tier a new key is made in: the Secure Enclave where the device has one.
    func preferredTier() -> DeviceKeyTier {
        provider.supports(.secureEnclave) ? .secureEnclave : .software
    }

    /// Makes a key in the preferred tier, falling back to software when the Secure Enclave refuses.
    func makeKey() throws(TesseraError) -> any DeviceKey {
        let tier = preferredTier()
        if let key = try? provider.makeKey(tier: tier) { return key }
        if tier != .software, let key = try? provider.makeKey(tier: .software) { return key }
        throw TesseraError(.storageUnavailable, message: "No device key can be made now.")
    }

    private func create() throws(TesseraError) -> Loaded {
        let key = try makeKey()
        let data = try encode(key)
        // Add-only: another process of this installation (an app extension) may have made one just now;
        // then that one is the installation's key.
        let existing: Data?
        do { existing = try store.create(data, for: storageKey) } catch { throw Self.storageError(error) }
        if let existing, let record = try? JSONDecoder().decode(Record.self, from: existing),
            let theirs = try? provider.restoreKey(tier: record.tier, dataRepresentation: record.key)
        {
            return Loaded(key: theirs, thumbprint: JWKThumbprint.sha256(of: theirs.publicKey), origin: .restored)
        }
        if existing != nil { return try replaceUnreadable() }
        return Loaded(key: key, thumbprint: JWKThumbprint.sha256(of: key.publicKey), origin: .created)
    }

    private func replaceUnreadable() throws(TesseraError) -> Loaded {
        let key = try makeKey()
        let data = try encode(key)
        do {
            try store.quarantine(storageKey)
            try store.save(data, for: storageKey)
        } catch {
            throw Self.storageError(error)
        }
        return Loaded(key: key, thumbprint: JWKThumbprint.sha256(of: key.publicKey), origin: .replacedUnreadable)
    }

    private func encode(_ key: any DeviceKey) throws(TesseraError) -> Data {
        do {
            return try JSONEncoder().encode(Record(tier: key.tier, key: key.dataRepresentation))
        } catch {
            throw TesseraError(.storageUnavailable, message: "The device key cannot be encoded.")
        }
    }

    static func storageError(_ error: CredentialStoreError) -> TesseraError {
        switch error {
        case .unavailable, .corrupted:
            return TesseraError(.storageUnavailable, message: "The device key cannot be read now.")
        case .denied:
            return TesseraError(.storageAccessDenied, message: "Access to the device key was refused.")
        case .misconfigured(let message):
            return TesseraError(.storageMisconfigured, message: "The device key cannot be stored: \(message)")
        }
    }
}
