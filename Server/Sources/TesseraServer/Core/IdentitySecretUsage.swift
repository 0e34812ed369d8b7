import Synchronization

/// Decides when identify records an identity secret's `last_used_at`: at most once per interval per
/// secret on this node, so identify's throughput does not pay for a write on every call.
///
/// The record is written inside the identify transaction that used the secret (see
/// ``IdentifyCommand/recordSecretUse``), so it costs one extra statement a minute, not a transaction.
/// `last_used_at` is therefore accurate to about one interval.
final class IdentitySecretUsage: Sendable {
    private let interval: Int64
    private let lastRecorded = Mutex<[String: Int64]>([:])

    /// - Parameter interval: the least number of seconds between two records of one secret.
    init(interval: Int64 = 60) {
        self.interval = interval
    }

    /// Whether an identify at `now` that used `kid` of `projectID` should record it; a true answer
    /// reserves the interval, so concurrent identifies record it once.
    func shouldRecord(projectID: String, kid: String, now: Int64) -> Bool {
        let key = projectID + "/" + kid
        return lastRecorded.withLock { recorded in
            if let last = recorded[key], now - last < interval, now >= last { return false }
            if recorded.count >= 10_000 { recorded.removeAll(keepingCapacity: true) }
            recorded[key] = now
            return true
        }
    }

    /// Gives the reservation back after the identify that was to record failed, so the next one does.
    func recordFailed(projectID: String, kid: String) {
        let key = projectID + "/" + kid
        _ = lastRecorded.withLock { $0.removeValue(forKey: key) }
    }
}
