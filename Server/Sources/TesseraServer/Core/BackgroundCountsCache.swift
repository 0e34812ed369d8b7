import Synchronization

/// Counts per project, counted in the background: counting a million profiles takes a few hundred
/// milliseconds, more than a page may. A view never waits for a count: it shows the last one
/// (recounted in the background when older than ``seconds``), or none yet while the first count runs.
final class BackgroundCountsCache<Value: Sendable>: Sendable {
    private struct Entry {
        var value: Value?
        var at: Int64 = 0
        var counting = false
    }

    private let entries = Mutex<[String: Entry]>([:])
    /// How old a count may be before the next view recounts it.
    let seconds: Int64

    init(seconds: Int64 = 60) { self.seconds = seconds }

    /// The last counts of the project and when they were counted (nil before the first count ends);
    /// starts a count when there is none or it is older than ``seconds``, unless one is running.
    func get(projectID: String, now: Int64, count: @escaping @Sendable () async throws -> Value) -> (
        value: Value, at: Int64
    )? {
        let (entry, start) = entries.withLock { entries -> (Entry, Bool) in
            var entry = entries[projectID] ?? Entry()
            let start = !entry.counting && (entry.value == nil || now - entry.at >= seconds)
            if start {
                entry.counting = true
                entries[projectID] = entry
            }
            return (entry, start)
        }
        if start {
            Task {
                let value = try? await count()
                self.entries.withLock { entries in
                    entries[projectID]?.counting = false
                    if let value {
                        entries[projectID]?.value = value
                        entries[projectID]?.at = now
                    }
                }
            }
        }
        return entry.value.map { ($0, entry.at) }
    }

    /// Waits until no count runs for the project (tests).
    func settled(projectID: String) async {
        while entries.withLock({ $0[projectID]?.counting ?? false }) { try? await Task.sleep(for: .milliseconds(5)) }
    }
}
