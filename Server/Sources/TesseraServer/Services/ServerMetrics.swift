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

    /// Counts an identify by outcome (`created`, `signed_in`, `promoted`, `merged`, `unchanged`).
    func identified(outcome: String) { increment("tessera_identify_total", "outcome", outcome) }

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

    /// The Prometheus text exposition.
    func exposition() -> [UInt8] { registry.emitToBuffer() }
}
