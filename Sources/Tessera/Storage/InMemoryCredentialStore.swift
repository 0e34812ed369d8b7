public import Foundation

/// A credential store in process memory: for tests, previews and apps that want no persistence.
///
/// Share one instance between clients to model "the same device".
public final class InMemoryCredentialStore: CredentialStore {
    private let values: Locked<[String: Data]>
    private let exclusive = ProcessLock()

    /// Creates an empty store, or one holding `values`.
    /// - Parameter values: The initial contents.
    public init(_ values: [String: Data] = [:]) {
        self.values = Locked(values)
    }

    public func load(_ key: String) throws(CredentialStoreError) -> Data? {
        values.withLock { $0[key] }
    }

    public func save(_ data: Data, for key: String) throws(CredentialStoreError) {
        values.withLock { $0[key] = data }
    }

    public func remove(_ key: String) throws(CredentialStoreError) {
        _ = values.withLock { $0.removeValue(forKey: key) }
    }

    /// Excludes the other clients of this instance.
    public func withExclusiveAccess<Result>(
        to key: String, _ body: () throws(CredentialStoreError) -> Result
    ) throws(CredentialStoreError) -> Result {
        try exclusive.withLock(body)
    }
}
