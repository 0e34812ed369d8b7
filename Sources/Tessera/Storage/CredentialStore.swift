public import Foundation

/// Where the SDK keeps the installation identity and the session between launches.
///
/// The SDK keeps one value per ``TesseraConfiguration/storageKey``. An implementation must tell apart
/// "nothing stored" (return nil), "cannot read right now" (throw ``CredentialStoreError/unavailable(_:)``:
/// the SDK retries and never mints a new identity), and "stored but unreadable for good" (throw
/// ``CredentialStoreError/corrupted(_:)``: the SDK removes it and starts a fresh identity).
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
}

/// A credential store failure.
public enum CredentialStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The store cannot be used right now (locked keychain, file busy or unreadable): transient.
    case unavailable(String)
    /// The stored value is there but cannot be decrypted or parsed: it will never be readable.
    case corrupted(String)

    public var description: String {
        switch self {
        case .unavailable(let message): return "credential store unavailable: \(message)"
        case .corrupted(let message): return "credential store corrupted: \(message)"
        }
    }
}
