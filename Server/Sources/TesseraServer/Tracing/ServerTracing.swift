public import CoreMetrics
import Foundation
import Logging
public import OTel
import ServiceLifecycle
public import Tracing

/// Tracing and per-route request metrics, sent to an OpenTelemetry collector; off (nil) by default.
///
/// With it on, every request gets a server span (continuing the caller's W3C `traceparent`), its
/// database work child spans, and each webhook delivery attempt a client span in the trace of the
/// request that produced the event, whose `traceparent` the delivery carries. Requests are
/// measured as `http.server.request.duration` per method, route and status.
///
/// With it off (``ServerConfiguration/tracing`` nil) no middleware is installed and no span is made.
public struct ServerTracing: Sendable {
    /// Starts the spans of requests, database work and webhook delivery attempts.
    public let tracer: any Tracer
    /// Records `http.server.request.duration`; nil records nothing.
    public let metrics: (any MetricsFactory)?
    /// The exporters' background work (batching and sending), run with the node's services.
    let services: [any Service]

    /// Tracing with a tracer of the caller's (tests pass an in-memory one).
    /// - Parameters:
    ///   - tracer: starts every span.
    ///   - metrics: records the request durations; nil records none.
    public init(tracer: any Tracer, metrics: (any MetricsFactory)? = nil) {
        self.init(tracer: tracer, metrics: metrics, services: [])
    }

    init(tracer: any Tracer, metrics: (any MetricsFactory)?, services: [any Service]) {
        self.tracer = tracer
        self.metrics = metrics
        self.services = services
    }

    /// Traces and metrics exported with OTLP/HTTP (protobuf), configured by `configuration` and then
    /// by the standard `OTEL_*` environment variables of the process (`OTEL_EXPORTER_OTLP_ENDPOINT`,
    /// `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_SCHEDULE_DELAY`, …), which win.
    public static func otlp(configuration: OTel.Configuration = defaultOTelConfiguration) throws -> ServerTracing {
        let traces = try OTel.makeTracingBackend(configuration: configuration)
        let metrics = try OTel.makeMetricsBackend(configuration: configuration)
        let tracing = ServerTracing(
            tracer: traces.factory, metrics: metrics.factory,
            services: [OffLoopService(traces.service), OffLoopService(metrics.service)])
        // swift-otel's OTLP/HTTP exporter shuts its HTTP client down synchronously in its deinit, which
        // traps on an event loop thread, and `tessera serve` runs its tasks on NIO's event loops. So the
        // tracer and the metrics factory (one set per process) live as long as the process, and the
        // services, which release their exporters when they stop, run off the event loops.
        _ = Unmanaged.passRetained(ProcessLifetime(tracing))
        return tracing
    }

    /// Holds the OTLP backends until the process exits (see ``otlp(configuration:)``).
    private final class ProcessLifetime: Sendable {
        let tracing: ServerTracing
        init(_ tracing: ServerTracing) { self.tracing = tracing }
    }

    /// The OpenTelemetry configuration Tessera starts from: service `tessera` with its release,
    /// traces and metrics over OTLP/HTTP to `http://localhost:4318`, no log export, the SDK's own
    /// diagnostics in the server's log.
    public static var defaultOTelConfiguration: OTel.Configuration {
        var configuration = OTel.Configuration.default
        configuration.serviceName = "tessera"
        configuration.resourceAttributes["service.version"] = TesseraRelease.version
        configuration.logs.enabled = false
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        configuration.metrics.otlpExporter.protocol = .httpProtobuf
        configuration.diagnosticLogger = .custom(Logger(label: "tessera.otel"))
        configuration.diagnosticLogLevel = .warning
        return configuration
    }

    /// Whether the environment turns tracing on: `TESSERA_TRACING=otlp`, or an OTLP endpoint
    /// (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) without
    /// `TESSERA_TRACING=off`; `OTEL_SDK_DISABLED=true` turns it off. A protocol other than
    /// `http/protobuf` is refused.
    static func enabled(in environment: [String: String]) throws -> Bool {
        if environment["OTEL_SDK_DISABLED"]?.lowercased() == "true" { return false }
        switch environment["TESSERA_TRACING"]?.lowercased() {
        case "otlp", "on": return try checkedProtocol(in: environment)
        case "off": return false
        case nil, "": break
        case let value?: throw ConfigurationError("TESSERA_TRACING must be otlp or off, not \(value)")
        }
        let enabled = ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"].contains {
            !(environment[$0] ?? "").isEmpty
        }
        return try enabled && checkedProtocol(in: environment)
    }

    /// Refuses an OTLP protocol other than `http/protobuf`: swift-otel stops the process on one that
    /// is not built in (gRPC is left out, for the build time).
    private static func checkedProtocol(in environment: [String: String]) throws -> Bool {
        for name in [
            "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
        ] {
            if let value = environment[name], !value.isEmpty, value != "http/protobuf" {
                throw ConfigurationError(
                    "\(name) must be http/protobuf (Tessera exports OTLP over HTTP only), not \(value)")
            }
        }
        return true
    }
}
