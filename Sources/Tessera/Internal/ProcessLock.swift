import Foundation

/// A lock held across a synchronous body that throws a typed error.
///
/// ``shared`` is the default exclusive access of a ``CredentialStore`` that does not lock by itself:
/// one lock for the whole process, held only for a read-merge-write of the stored state.
final class ProcessLock: Sendable {
    static let shared = ProcessLock()

    private let lock = Locked(())

    func withLock<Result>(_ body: () throws(CredentialStoreError) -> Result) throws(CredentialStoreError) -> Result {
        let outcome = lock.withLock { _ -> Swift.Result<Result, CredentialStoreError> in
            do throws(CredentialStoreError) {
                return .success(try body())
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }
}
