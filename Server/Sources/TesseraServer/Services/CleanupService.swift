import Foundation
import Logging
import ServiceLifecycle

/// Deletes expired sessions (with their devices), used identity-token IDs, finished rate-limit
/// windows and old anonymous profiles without a live session in the background, in batches, so no
/// single transaction holds the writer for long. Several nodes may run it at once.
struct CleanupService: Service {
    let store: any TesseraStore
    let interval: Duration
    let batchSize: Int
    /// Anonymous profiles created longer ago than this, with no live session, are deleted; nil keeps them.
    var anonymousRetentionSeconds: Int64? = 30 * 86_400
    /// Events created longer ago than this are deleted from the feed; nil keeps them.
    var eventRetentionSeconds: Int64? = 30 * 86_400
    let now: @Sendable () -> Date
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await runOnce()
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            } catch {
                return
            }
        }
    }

    /// Runs passes until a pass deletes less than a full batch of everything.
    func runOnce() async {
        do {
            while true {
                let seconds = Int64(now().timeIntervalSince1970.rounded(.down))
                let counts = try await store.deleteExpired(now: seconds, batchSize: batchSize)
                if counts.total > 0 {
                    logger.debug(
                        "cleanup",
                        metadata: [
                            "sessions": "\(counts.sessions)", "devices": "\(counts.devices)",
                            "token_ids": "\(counts.tokenIDs)", "operator_sessions": "\(counts.operatorSessions)",
                            "operator_enrollments": "\(counts.operatorEnrollments)",
                        ])
                }
                if counts.sessions < batchSize && counts.tokenIDs < batchSize && counts.operatorSessions < batchSize
                    && counts.operatorEnrollments < batchSize
                {
                    break
                }
                await Task.yield()
            }
            while true {
                let seconds = Int64(now().timeIntervalSince1970.rounded(.down))
                let counts = try await store.deleteStale(
                    now: seconds, anonymousCreatedBefore: anonymousRetentionSeconds.map { seconds - $0 },
                    batchSize: batchSize)
                if counts.total > 0 {
                    logger.debug(
                        "cleanup",
                        metadata: [
                            "rate_limit_windows": "\(counts.rateLimitWindows)",
                            "anonymous_profiles": "\(counts.anonymousProfiles)",
                        ])
                }
                if counts.rateLimitWindows < batchSize && counts.anonymousProfiles < batchSize { break }
                await Task.yield()
            }
            while let retention = eventRetentionSeconds {
                let seconds = Int64(now().timeIntervalSince1970.rounded(.down))
                let deleted = try await store.deleteEvents(createdBefore: seconds - retention, batchSize: batchSize)
                if deleted > 0 { logger.debug("cleanup", metadata: ["events": "\(deleted)"]) }
                if deleted < batchSize { return }
                await Task.yield()
            }
        } catch {
            logger.warning("cleanup failed", metadata: ["error": "\(error)"])
        }
    }
}

/// Closes the store after everything else in the service group has shut down.
struct StoreService: Service {
    let store: any TesseraStore

    func run() async throws {
        try? await gracefulShutdown()
        try await store.close()
    }
}
