import Foundation
import Logging
import ServiceLifecycle
import TesseraTokens
import Tracing

/// Delivers the webhooks: queues each enabled endpoint's new events from the feed, claims the due
/// deliveries under a lease, signs and sends them, and records each attempt with its next retry.
///
/// Several nodes may run one each: a delivery is leased to one of them at a time, and a lease that
/// outlives its node (killed mid-delivery) expires after ``leaseSeconds``, when another node takes
/// the delivery over. Delivery is at least once: a node that sent but died before recording sends again.
struct WebhookDispatcher: Service {
    /// Sends one signed delivery to a URL (the ``WebhookSender`` in production; tests inject answers).
    typealias Transport = @Sendable (WebhookSender.Delivery, String, [WebhookSecret]) async -> WebhookOutcome

    let store: any TesseraStore
    let transport: Transport
    var policy = WebhookRetryPolicy()
    let now: @Sendable () -> Date
    /// The longest the dispatcher rests when a pass found nothing to do (see ``rest(after:until:)``).
    var interval = Duration.seconds(30)
    /// How many deliveries one claim takes (and sends at once).
    var claimSize = 128
    /// How many events the fan-out reads per endpoint per step (at most ten endpoints a step, so one
    /// step is a short write transaction).
    var fanOutBatch = 100
    /// How long a claimed delivery stays leased: longer than an attempt's 15 s limit.
    var leaseSeconds: Int64 = 60
    /// Delivered and failed deliveries older than this leave the log; nil keeps them.
    var logRetentionSeconds: Int64? = 30 * 86_400
    /// This dispatcher's name in its leases.
    var node = OpaqueToken.identifier(prefix: "node_")
    var metrics: ServerMetrics?
    /// The node's activity, which counts the deliveries in flight for the drain's log.
    var activity: NodeActivity?
    /// How long a graceful shutdown waits for the deliveries in flight to be answered and recorded
    /// (an attempt's own limit is 15 s).
    var shutdownGrace = Duration.seconds(15)
    /// Traces each attempt in the trace of the request that produced its event (nil: tracing is off).
    var tracer: (any Tracer)? = nil

    let logger: Logger

    func run() async throws {
        var lastLogCleanup: Int64?
        var nextRetry: Int64?
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            // Read before the pass: a commit during the pass wakes the next rest at once.
            let seen = store.eventSignal.generation
            if let due = nextRetry, due <= seconds { nextRetry = nil }
            let done = await finishingOnShutdown { await pass() }
            if let due = done.nextRetry { nextRetry = min(nextRetry ?? due, due) }
            if lastLogCleanup.map({ seconds - $0 >= 3_600 }) ?? true {
                lastLogCleanup = seconds
                await deleteOldLog()
            }
            if done.attempts > 0 { continue }
            guard !Task.isShuttingDownGracefully && !Task.isCancelled else { return }
            await rest(after: seen, until: nextRetry)
        }
    }
    /// Runs a pass; a graceful shutdown lets the attempts in flight finish and be recorded (the pass
    /// claims nothing more), for at most ``shutdownGrace``. Past it the pass is cancelled: the
    /// attempts still in flight are dropped unrecorded, and their leases expire so that another node
    /// (or this one, restarted) sends them again.
    private func finishingOnShutdown(_ pass: @escaping @Sendable () async -> Pass) async -> Pass {
        let grace = shutdownGrace
        return await withTaskGroup(of: Pass?.self) { group in
            group.addTask { await pass() }
            group.addTask {
                // Ends without a value when the pass finished first (the group cancels this task).
                do {
                    try await gracefulShutdown()
                    try await Task.sleep(for: grace)
                } catch {}
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? Pass()
        }
    }

    /// Parks until this process commits events or queues deliveries (the store's ``EventSignal``),
    /// a retry this dispatcher scheduled comes due, ``interval`` passes (work of other nodes: the
    /// events of a node that died before delivering them, its expired leases), or a shutdown.
    private func rest(after seen: UInt64, until nextRetry: Int64?) async {
        var timeout = interval
        if let nextRetry {
            // Just past the due second: a claim takes what is due at `now` in whole seconds.
            let due = Date(timeIntervalSince1970: TimeInterval(nextRetry)).timeIntervalSince(now()) + 0.01
            timeout = min(timeout, .milliseconds(Int64(max(0.01, due) * 1_000)))
        }
        let (signal, limit) = (store.eventSignal, timeout)
        await cancelWhenGracefulShutdown { await signal.wait(after: seen, timeout: limit) }
    }

    private var seconds: Int64 { Int64(now().timeIntervalSince1970.rounded(.down)) }

    /// What one pass did: how many attempts it made, and the earliest retry it scheduled (or the
    /// lease expiry of attempts it could not record).
    struct Pass: Sendable {
        var attempts = 0
        var nextRetry: Int64?
    }

    /// One pass: queues the new events, then claims and sends what is due; returns how many
    /// attempts it made.
    @discardableResult
    func runOnce() async -> Int {
        await pass().attempts
    }

    private func pass() async -> Pass {
        do {
            for _ in 0..<10 {
                if try await store.fanOutWebhookDeliveries(now: seconds, batchSize: fanOutBatch) == 0 { break }
            }
            var pass = Pass()
            // A shutdown stops the claims: what was claimed is sent, nothing more.
            for _ in 0..<10 where !Task.isCancelled && !Task.isShuttingDownGracefully {
                let lease = "\(node):\(OpaqueToken.identifier(prefix: "lease_"))"
                let claimed = try await store.claimWebhookDeliveries(
                    lease: lease, now: seconds, leaseSeconds: leaseSeconds, limit: claimSize)
                pass.attempts += claimed.count
                if let due = await deliver(claimed) { pass.nextRetry = min(pass.nextRetry ?? due, due) }
                if claimed.count < claimSize { break }
            }
            return pass
        } catch {
            if !Task.isCancelled { logger.warning("webhook delivery pass failed", metadata: ["error": "\(error)"]) }
            return Pass()
        }
    }

    /// Sends the claimed deliveries at once and records each attempt; returns when the earliest of
    /// them is due again (a retry, or the lease of one that was not sent or not recorded), if any.
    @discardableResult
    func deliver(_ claimed: [ClaimedWebhookDelivery]) async -> Int64? {
        guard !claimed.isEmpty else { return nil }
        activity?.deliveriesStarted(claimed.count)
        defer { activity?.deliveriesFinished(claimed.count) }
        // Each endpoint's secrets are read once per claim.
        var webhooks: [String: WebhookRecord] = [:]
        for delivery in claimed where webhooks[delivery.webhookID] == nil {
            if let webhook = try? await store.webhook(projectID: delivery.projectID, id: delivery.webhookID) {
                webhooks[delivery.webhookID] = webhook
            }
        }
        let found = webhooks
        // The sends run at once; their results are recorded together in one transaction when the
        // last has answered (the pass waits for it anyway): one commit per pass, not one per send.
        let results = await withTaskGroup(of: WebhookAttemptResult?.self) { group in
            for delivery in claimed {
                guard let webhook = found[delivery.webhookID] else { continue }
                group.addTask { await attempt(delivery, to: webhook) }
            }
            var results: [WebhookAttemptResult] = []
            for await result in group {
                if let result { results.append(result) }
            }
            return results
        }
        guard !Task.isCancelled else { return nil }
        let leaseExpiry = seconds + leaseSeconds
        var due = results.count < claimed.count ? leaseExpiry : nil
        for result in results where result.state == .pending {
            if let next = result.nextAttemptAt { due = min(due ?? next, next) }
        }
        if await !record(results) { due = leaseExpiry }
        return due
    }

    /// Makes one attempt; nil when a shutdown cancelled it.
    private func attempt(_ delivery: ClaimedWebhookDelivery, to webhook: WebhookRecord) async
        -> WebhookAttemptResult?
    {
        let number = delivery.attempt + 1
        guard let body = Self.body(of: delivery) else {
            // Retention deleted the event before it could be delivered: nothing is left to send.
            let result = WebhookAttemptResult(
                webhookID: delivery.webhookID, eventID: delivery.eventID, lease: delivery.lease, attempt: number,
                at: seconds, statusCode: nil, error: "event_expired", durationMilliseconds: 0, state: .failed,
                nextAttemptAt: nil, disableReason: nil, failingDisableBefore: Int64.min)
            metrics?.webhookAttempt(result, latencySeconds: nil)
            return result
        }
        let sentAt = seconds
        let secrets = webhook.signingSecrets(now: sentAt).compactMap { try? WebhookSecret($0) }
        let outcome = await send(
            WebhookSender.Delivery(id: delivery.eventID, timestamp: sentAt, body: body), delivery, webhook, secrets)
        // Cancelled by a shutdown: not the endpoint's failure; the lease runs out instead.
        if Task.isCancelled { return nil }
        let finishedAt = seconds
        var result = policy.result(of: outcome, attempt: number, delivery: delivery, now: finishedAt)
        if outcome.kind != .delivered {
            logger.notice(
                "webhook attempt failed",
                metadata: [
                    "webhook_id": "\(delivery.webhookID)", "event_id": "\(delivery.eventID)", "attempt": "\(number)",
                    "status": "\(outcome.statusCode.map(String.init) ?? outcome.error?.rawValue ?? "none")",
                ])
        }
        result.requestBody = String(decoding: body, as: UTF8.self)
        result.responseBody = outcome.responseBody
        metrics?.webhookAttempt(
            result, latencySeconds: outcome.kind == .delivered ? finishedAt - delivery.eventCreatedAt : nil)
        return result
    }

    /// Sends one attempt with the trace context of its event: in a span of that trace when tracing is on.
    private func send(
        _ message: WebhookSender.Delivery, _ delivery: ClaimedWebhookDelivery, _ webhook: WebhookRecord,
        _ secrets: [WebhookSecret]
    ) async -> WebhookOutcome {
        var message = message
        let stored = delivery.traceContext.flatMap(TraceHeaders.init(stored:))
        guard let tracer else {
            message.traceParent = stored?.traceParent
            message.traceState = stored?.traceState
            return await transport(message, webhook.url, secrets)
        }
        return await WebhookTracing.attempt(
            message, stored: stored, delivery: delivery, tracer: tracer
        ) { await transport($0, webhook.url, secrets) }
    }

    /// Records the attempts; one whose lease was lost meanwhile (another node took the delivery
    /// over) records nothing.
    private func record(_ results: [WebhookAttemptResult]) async -> Bool {
        guard !results.isEmpty else { return true }
        do {
            let recorded = try await store.recordWebhookAttempts(results)
            for (result, kept) in zip(results, recorded) where !kept {
                logger.debug(
                    "webhook lease lost before the attempt was recorded",
                    metadata: ["webhook_id": "\(result.webhookID)", "event_id": "\(result.eventID)"])
            }
            return true
        } catch {
            logger.warning(
                "webhook attempts not recorded", metadata: ["attempts": "\(results.count)", "error": "\(error)"])
            return false
        }
    }

    /// The body of a delivery: the event JSON as the feed shows it, or the test event's.
    static func body(of delivery: ClaimedWebhookDelivery) -> [UInt8]? {
        if let body = delivery.body { return Array(body.utf8) }
        guard let event = delivery.event else { return nil }
        var writer = JSONWriter()
        writer.event(event)
        return writer.bytes
    }

    /// Deletes delivered and failed deliveries past the log's retention, in batches.
    func deleteOldLog() async {
        guard let retention = logRetentionSeconds else { return }
        do {
            while try await store.deleteFinishedWebhookDeliveries(
                attemptedBefore: seconds - retention, batchSize: fanOutBatch) == fanOutBatch
            {
                await Task.yield()
            }
        } catch {
            logger.warning("webhook log cleanup failed", metadata: ["error": "\(error)"])
        }
    }
}
