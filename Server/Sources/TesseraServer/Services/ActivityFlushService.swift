import Foundation
import Logging
import ServiceLifecycle

/// Writes the active users and tallies ``ActivityRecorder`` queued, every `interval`, and once more
/// at a graceful shutdown; once an hour it deletes activity older than
/// ``ActivityRecorder/retentionDays``. It writes the sessions' last clients that
/// ``SessionClientRecorder`` queued too.
struct ActivityFlushService: Service {
    let recorder: ActivityRecorder
    var clients: SessionClientRecorder? = nil
    var interval: Duration = .seconds(2)
    var batchSize = 1_000
    let now: @Sendable () -> Date
    let logger: Logger

    func run() async throws {
        var lastRetention: Int64?
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await flush()
            let seconds = Int64(now().timeIntervalSince1970.rounded(.down))
            if lastRetention.map({ seconds - $0 >= 3_600 }) ?? true {
                lastRetention = seconds
                await deleteOld(today: ActivitySQL.day(of: seconds))
            }
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
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
