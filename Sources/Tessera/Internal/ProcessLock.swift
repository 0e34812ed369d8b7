import Foundation

/// A lock held across a synchronous body that throws a typed error.
///
/// ``shared`` is the default exclusive access of a ``CredentialStore`` that does not lock by itself:
/// one lock for the whole process, held only for a read-merge-write of the stored state.
///
/// It holds an `NSLock` itself rather than a `Locked<()>`: the thread sanitizer reports the inout
/// access to a zero-sized value that `Locked` would make as a race between two threads that both
/// held the lock (seen once in CI, on `persistMerged`).
final class ProcessLock: Sendable {
    static let shared = ProcessLock()

    private let lock = NSLock()

    func withLock<Result>(_ body: () throws(CredentialStoreError) -> Result) throws(CredentialStoreError) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
