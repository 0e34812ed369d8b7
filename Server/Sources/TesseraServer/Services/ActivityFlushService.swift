import Foundation
import Logging
import ServiceLifecycle

/// Writes the active users and tallies ``ActivityRecorder`` queued, and the sessions' last clients
/// ``SessionClientRecorder`` queued, every `interval` while there is traffic, and once more at a
/// graceful shutdown; once an hour it deletes activity older than ``ActivityRecorder/retentionDays``;
/// after an upgrade to schema 18 it counts the activity written before, in chunks of
/// `backfillChunkRows` rows (each its own write transaction, so other writes go between them), for
/// at most `backfillBudget` per tick.
///
/// While nothing is queued it waits twice as long after each empty look, up to `idleInterval`, so
/// an idle server wakes it a few times a minute rather than every two seconds; the first look that
/// finds something queued brings the interval back to `interval`. (Waiting for the first mark
/// itself would need a signal on the recorder's request path.)
struct ActivityFlushService: Service {
    let recorder: ActivityRecorder
    var clients: SessionClientRecorder? = nil
    var interval: Duration = .seconds(2)
    /// The longest wait between two looks at an empty queue.
    var idleInterval: Duration = .seconds(32)
    var batchSize = 1_000
    /// The most rows of one day a backfill transaction counts (at 1M profiles, well under a second).
    var backfillChunkRows = Self.defaultBackfillChunkRows
    /// How long the backfill's chunks may run back to back per tick.
    var backfillBudget: Duration = .seconds(1)
    let now: @Sendable () -> Date
    let logger: Logger

    /// The default of `backfillChunkRows`.
    static let defaultBackfillChunkRows = 1_000

    func run() async throws {
        var lastRetention: Int64?
        var wait = interval
        var backfilling = true
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            // Marks and clients only: a tally alone waits for the next look (it needs no promptness).
            let busy = backfilling || recorder.queued > 0 || (clients?.queued ?? 0) > 0
            wait = busy ? interval : min(wait * 2, idleInterval)
            await flush()
            if backfilling { backfilling = await backfill() }
            let seconds = Int64(now().timeIntervalSince1970.rounded(.down))
            if lastRetention.map({ seconds - $0 >= 3_600 }) ?? true {
                lastRetention = seconds
                await deleteOld(today: ActivitySQL.day(of: seconds))
            }
            do {
                try await cancelWhenGracefulShutdown { [wait] in try await Task.sleep(for: wait) }
            } catch {
                break
            }
        }
        await flush()
    }

    private func flush() async {
        do {
            try await recorder.flush()
        } catch {
            logger.warning(
                "Could not record active users; retrying at the next flush.", metadata: ["error": "\(error)"])
        }
        do {
            try await clients?.flush()
        } catch {
            logger.warning(
                "Could not record the sessions' clients; retrying at the next flush.", metadata: ["error": "\(error)"])
        }
    }

    /// Counts chunks of the activity written before schema 18, if any is left, for at most
    /// `backfillBudget`; answers whether to look again at the next tick. A chunk is one write
    /// transaction: the writer is never held for long, and the flush's writes go between chunks.
    private func backfill() async -> Bool {
        let clock = ContinuousClock()
        let start = clock.now
        do {
            while try await recorder.store.backfillActivity(chunkRows: backfillChunkRows) {
                if clock.now - start >= backfillBudget { return true }
            }
            return false
        } catch {
            logger.warning("Could not count past active users; retrying.", metadata: ["error": "\(error)"])
            return true
        }
    }

    private func deleteOld(today: Int64) async {
        do {
            while try await recorder.store.deleteActivity(
                before: today - ActivityRecorder.retentionDays, batchSize: batchSize) >= batchSize
            {
                await Task.yield()
            }
        } catch {
            logger.warning("Could not delete old activity.", metadata: ["error": "\(error)"])
        }
    }
}
