import Foundation

/// A value guarded by a lock: the one audited `@unchecked Sendable` type of the SDK.
///
/// Every access goes through ``withLock(_:)``, which holds `NSLock` for the duration of the closure.
/// The closure must not suspend or call back into code that takes the same lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
