public import Foundation

/// Where the SDK keeps the installation identity and the session between launches.
///
/// The SDK keeps one value per ``TesseraConfiguration/storageKey``. An implementation must tell apart
/// "nothing stored" (return nil), "cannot read right now" (throw ``CredentialStoreError/unavailable(_:)``:
/// the SDK retries and never mints a new identity), "cannot work at all as configured" (throw
/// ``CredentialStoreError/misconfigured(_:)``: the SDK reports it and does not retry by itself), and
/// "stored but unreadable for good" (throw ``CredentialStoreError/corrupted(_:)``: the SDK moves it aside
/// with ``quarantine(_:)``, reports it, and starts a fresh identity).
public protocol CredentialStore: Sendable {
    /// Returns the value stored under `key`, or nil when there is none.
    /// - Parameter key: The storage key.
    func load(_ key: String) throws(CredentialStoreError) -> Data?
    /// Stores `data` under `key`, replacing any previous value atomically.
    /// - Parameters:
    ///   - data: The value.
    ///   - key: The storage key.
    func save(_ data: Data, for key: String) throws(CredentialStoreError)
    /// Removes the value under `key`; removing a missing value succeeds.
    /// - Parameter key: The storage key.
    func remove(_ key: String) throws(CredentialStoreError)
    /// Stores `data` under `key` only when nothing is stored there: the first write of a new installation,
    /// which must never overwrite a value that a read missed.
    ///
    /// The default implementation loads, then saves when the load found nothing; stores that can do it
    /// atomically (an add-only keychain write, an exclusive file creation) override it.
    /// - Parameters:
    ///   - data: The value.
    ///   - key: The storage key.
    /// - Returns: nil when `data` was stored; the value already stored (and nothing written) otherwise.
    func create(_ data: Data, for key: String) throws(CredentialStoreError) -> Data?
    /// Moves the unreadable value under `key` aside, keeping its bytes for diagnosis, so that `key` is free.
    ///
    /// The default implementation removes the value.
    /// - Parameter key: The storage key.
    func quarantine(_ key: String) throws(CredentialStoreError)
    /// The marker that tells a reinstalled app from a relaunched one, for stores whose contents outlive
    /// the app (the iOS keychain survives the app's deletion); nil by default.
    var installationMarker: InstallationMarker? { get }
    /// Runs `body` while no other client of this store runs its own: in this process, and in others
    /// (an app and its extensions sharing the store) where the store can lock across processes.
    ///
    /// The SDK reads the stored value, merges its own changes into it and writes the result inside
    /// `body`, so that two clients sharing a store never overwrite each other from stale memory.
    /// `body` is short and synchronous. The default implementation runs `body` under a lock of this
    /// process only; share a store between processes only through a store that overrides it.
    /// - Parameters:
    ///   - key: The storage key.
    ///   - body: The read-merge-write.
    func withExclusiveAccess<Result>(
        to key: String, _ body: () throws(CredentialStoreError) -> Result
    ) throws(CredentialStoreError) -> Result
}

extension CredentialStore {
    public func create(_ data: Data, for key: String) throws(CredentialStoreError) -> Data? {
        if let existing = try load(key) { return existing }
        try save(data, for: key)
        return nil
    }

    public func quarantine(_ key: String) throws(CredentialStoreError) {
        try remove(key)
    }

    public var installationMarker: InstallationMarker? { nil }

    public func withExclusiveAccess<Result>(
        to key: String, _ body: () throws(CredentialStoreError) -> Result
    ) throws(CredentialStoreError) -> Result {
        try ProcessLock.shared.withLock(body)
    }
}

/// A credential store failure.
public enum CredentialStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The store cannot be used right now (locked keychain, file busy or unreadable): transient.
    case unavailable(String)
    /// The stored value is there but cannot be decrypted or parsed: it will never be readable.
    case corrupted(String)
    /// The store cannot work as configured (a missing keychain entitlement, an invalid parameter):
    /// retrying will not help; the app must be fixed.
    case misconfigured(String)
    /// The user (or the system on their behalf) refused access: a keychain prompt was cancelled or failed
    /// to authenticate. Retrying at once would only ask again: the SDK reports it and tries again on
    /// ``TesseraClient/start()`` and on the next foreground, never at its backoff.
    case denied(String)

    public var description: String {
        switch self {
        case .unavailable(let message): return "credential store unavailable: \(message)"
        case .corrupted(let message): return "credential store corrupted: \(message)"
        case .misconfigured(let message): return "credential store misconfigured: \(message)"
        case .denied(let message): return "credential store access denied: \(message)"
        }
    }
}
