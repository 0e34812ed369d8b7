import CoreMetrics
import Prometheus
import Synchronization

/// The server's metrics, exported in the Prometheus text format at `GET /metrics`.
///
/// Metrics go to this application's own registry (no global bootstrap), so several applications
/// (tests) can live in one process.
final class ServerMetrics: Sendable {
    private struct RouteKey: Hashable {
        var route: String
        var method: String
        var status: Int
    }

    let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let routeMetrics = Mutex<[RouteKey: (counter: CoreMetrics.Counter, timer: CoreMetrics.Timer)]>([:])
    private let labelled = Mutex<[String: CoreMetrics.Counter]>([:])

    init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(2.5),
        ]
        self.factory = factory
        webhookLatency = registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(
                namespace: "tessera", metricName: "webhook_delivery_latency", unitName: "seconds",
                helpText: "From an event's commit to its delivery's 2xx answer."),
            buckets: [
                .seconds(1), .seconds(2), .seconds(5), .seconds(10), .seconds(30), .seconds(60), .seconds(300),
                .seconds(1_800), .seconds(7_200), .seconds(36_000), .seconds(172_800),
            ])
    }

    /// Records one answered request.
    func recordRequest(route: String, method: String, status: Int, duration: Duration) {
        let key = RouteKey(route: route, method: method, status: status)
        let metrics = routeMetrics.withLock { cache in
            if let existing = cache[key] { return existing }
            let dimensions = [("route", route), ("method", method), ("status", String(status))]
            let created = (
                CoreMetrics.Counter(label: "tessera_http_requests_total", dimensions: dimensions, factory: factory),
                CoreMetrics.Timer(
                    label: "tessera_http_request_duration_seconds", dimensions: dimensions, factory: factory)
            )
            cache[key] = created
            return created
        }
        metrics.counter.increment()
        let (seconds, attoseconds) = duration.components
        metrics.timer.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    private func increment(_ label: String, _ name: String, _ value: String) {
        let key = "\(label)|\(name)|\(value)"
        let counter = labelled.withLock { cache in
            if let existing = cache[key] { return existing }
            let created = CoreMetrics.Counter(label: label, dimensions: [(name, value)], factory: factory)
            cache[key] = created
            return created
        }
        counter.increment()
    }

    /// Counts a session created (`anonymous`, `verified`, `unverified`).
    func sessionCreated(kind: String) { increment("tessera_sessions_created_total", "kind", kind) }

    /// Counts an identify by outcome (`created`, `signed_in`, `promoted`, `merged`, `unchanged`), and
    /// tallies it on the project's day (`identify.<outcome>`).
    func identified(outcome: String, projectID: String) {
        increment("tessera_identify_total", "outcome", outcome)
        tallyIdentify(outcome, projectID: projectID)
    }

    /// Counts an identity token that identify refused, by its code, and tallies it on the project's day
    /// (`identify.<code>`).
    func identifyRefused(code: String, projectID: String) {
        verificationFailed(code: code)
        tallyIdentify(code, projectID: projectID)
    }

    /// Where per-day tallies go (the store's `daily_tallies`, through ``ActivityRecorder``): set once
    /// by ``TesseraCore``; before that (a metrics object alone, in tests) they are not kept.
    private let tallySink = Mutex<(@Sendable (_ name: String, _ projectID: String) -> Void)?>(nil)

    /// Sends every later per-day tally (identify outcomes and refusals, App Attest checks) to `sink`.
    func forwardTallies(to sink: @escaping @Sendable (_ name: String, _ projectID: String) -> Void) {
        tallySink.withLock { $0 = sink }
    }

    private func tally(_ name: String, projectID: String) {
        tallySink.withLock { $0 }?(name, projectID)
    }

    private func tallyIdentify(_ outcome: String, projectID: String) {
        tally("identify." + outcome, projectID: projectID)
    }

    /// Counts one App Attest check: its verdict (`tessera_app_attest_verdicts_total{verdict}`), and by
    /// gate (`new_installation`, `restore`, `identify`) the checks and those `enforce` would have
    /// refused; in `monitor` mode their ratio is the share of starts `enforce` would refuse. The same
    /// two are tallied on the project's day (`app_attest.checks.<gate>`, `app_attest.would_refuse.<gate>`).
    func appAttestChecked(gate: AppAttestPolicy.Gate, decision: AppAttestPolicy.Decision, projectID: String) {
        if let verdict = decision.verdict { increment("tessera_app_attest_verdicts_total", "verdict", verdict.label) }
        let gateLabel =
            switch gate {
            case .newInstallation: "new_installation"
            case .restore: "restore"
            case .identify: "identify"
            }
        increment("tessera_app_attest_checks_total", "gate", gateLabel)
        tally("app_attest.checks." + gateLabel, projectID: projectID)
        if decision.enforceWouldRefuse {
            increment("tessera_app_attest_enforce_would_refuse_total", "gate", gateLabel)
            tally("app_attest.would_refuse." + gateLabel, projectID: projectID)
        }
    }

    /// Counts a failed identity-token or session-JWT verification by its code.
    func verificationFailed(code: String) { increment("tessera_token_verification_failures_total", "code", code) }

    /// The event counts already exported, to add only what came since.
    private let exportedEvents = Mutex<[EventType: Int]>([:])

    /// Brings `tessera_events_written_total` (by type) up to the store's tally; run at each scrape,
    /// so writing an event costs nothing here.
    func syncEvents(_ tally: EventTally) {
        // Read under the lock, so two scrapes at once never export a count twice.
        let increments = exportedEvents.withLock { exported in
            let current = tally.snapshot()
            defer { exported = current }
            return current.compactMap { type, count in
                count > exported[type, default: 0] ? (type, count - exported[type, default: 0]) : nil
            }
        }
        for (type, increment) in increments {
            let key = "tessera_events_written_total|type|\(type.rawValue)"
            let counter = labelled.withLock { cache in
                if let existing = cache[key] { return existing }
                let created = CoreMetrics.Counter(
                    label: "tessera_events_written_total", dimensions: [("type", type.rawValue)], factory: factory)
                cache[key] = created
                return created
            }
            counter.increment(by: increment)
        }
    }

    /// Counts a webhook attempt by outcome (`delivered`, `retrying`: failed and due again, `failed`:
    /// no retry left or no event to send, `gone`: answered `410`), and records the latency from the
    /// event's commit to a 2xx answer.
    func webhookAttempt(_ result: WebhookAttemptResult, latencySeconds: Int64?) {
        let outcome =
            switch result.state {
            case .delivered: "delivered"
            case .pending: "retrying"
            case .failed: result.disableReason == "gone" ? "gone" : "failed"
            }
        increment("tessera_webhook_deliveries_total", "outcome", outcome)
        if let latencySeconds { webhookLatency.record(.seconds(max(0, latencySeconds))) }
    }

    private let webhookLatency: DurationHistogram

    /// The webhooks whose queue age was exported, so one that caught up is set back to 0.
    private let queuedWebhooks = Mutex<Set<String>>([])

    /// Sets `tessera_webhook_oldest_pending_age_seconds` (by `webhook_id`): how long the oldest
    /// undelivered event of each endpoint has waited since its commit; run at each scrape.
    func syncWebhookQueue(_ oldest: [(webhookID: String, eventCreatedAt: Int64)], now: Int64) {
        let current = Dictionary(oldest.map { ($0.webhookID, $0.eventCreatedAt) }, uniquingKeysWith: min)
        let exported = queuedWebhooks.withLock { exported in
            defer { exported = Set(current.keys) }
            return exported.union(current.keys)
        }
        for webhookID in exported {
            let gauge = registry.makeGauge(
                descriptor: MetricNameDescriptor(
                    namespace: "tessera", metricName: "webhook_oldest_pending_age", unitName: "seconds",
                    helpText: "How long the oldest undelivered event of an endpoint has waited."),
                labels: [("webhook_id", webhookID)])
            gauge.set(to: Double(current[webhookID].map { max(0, now - $0) } ?? 0))
        }
    }

    /// Sets `tessera_active_profiles` and `tessera_active_installations` (by `project_id`, `window`:
    /// `1d`, `7d`, `30d`, and `kind`: `all`, `anonymous`, `identified`) from a project's last counted
    /// activity summary; run at each scrape, from a count made in the background.
    func syncActivity(projectID: String, summary: ActivitySummary) {
        for (days, counts) in summary.windows {
            let window = "\(days)d"
            for (metricName, values) in [
                ("active_profiles", [counts.profiles, counts.anonymousProfiles, counts.identifiedProfiles]),
                (
                    "active_installations",
                    [counts.installations, counts.anonymousInstallations, counts.identifiedInstallations]
                ),
            ] {
                for (kind, value) in zip(["all", "anonymous", "identified"], values) {
                    registry.makeGauge(
                        descriptor: MetricNameDescriptor(
                            namespace: "tessera", metricName: metricName, unitName: "",
                            helpText: "Distinct \(metricName == "active_profiles" ? "profiles" : "installations") "
                                + "active (a heartbeat, start or identify) in the last 1, 7 or 30 days (UTC days)."),
                        labels: [("project_id", projectID), ("window", window), ("kind", kind)]
                    ).set(to: Double(value))
                }
            }
        }
    }

    /// The Prometheus text exposition.
    func exposition() -> [UInt8] { registry.emitToBuffer() }
}
