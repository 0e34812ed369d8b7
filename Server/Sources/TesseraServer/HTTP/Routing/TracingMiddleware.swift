import CoreMetrics
import HTTPTypes
import Hummingbird
import Tracing

/// Traces every request when tracing is on (it is not installed otherwise): a server span that
/// continues the caller's W3C `traceparent`/`tracestate`, named after the route once the router
/// matched it, with the request's database work beneath it; and records
/// `http.server.request.duration` per method, route and status.
///
/// Installed before ``TesseraMiddleware``, so it sees the final answer (errors already mapped).
struct TracingMiddleware: RouterMiddleware {
    typealias Context = TesseraRequestContext

    let tracer: any Tracer
    let metrics: (any MetricsFactory)?

    init(_ tracing: ServerTracing) {
        tracer = tracing.tracer
        metrics = tracing.metrics
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let start = ContinuousClock.now
        var parent = ServiceContext.current ?? .topLevel
        let headers = TraceHeaders(
            traceParent: request.headers[.traceParent], traceState: request.headers[.traceState])
        tracer.extract(headers, into: &parent, using: TraceHeaders.Extractor())
        let method = request.method.rawValue
        let response = try await TraceScope.$tracer.withValue(tracer) {
            try await tracer.withSpan(method, context: parent, ofKind: .server) { span in
                span.attributes["http.request.method"] = method
                span.attributes["url.path"] = request.uri.path
                let response = try await next(request, context)
                let route = Self.route(context)
                span.operationName = "\(method) \(route)"
                span.attributes["http.route"] = route
                span.attributes["http.response.status_code"] = Int(response.status.code)
                if response.status.code >= 500 { span.setStatus(.init(code: .error)) }
                return response
            }
        }
        if let metrics {
            Timer(
                label: "http.server.request.duration",
                dimensions: [
                    ("http.request.method", method), ("http.route", Self.route(context)),
                    ("http.response.status_code", String(response.status.code)),
                ],
                factory: metrics
            ).recordNanoseconds(Self.nanoseconds(start.duration(to: .now)))
        }
        return response
    }

    /// The route template the router matched, or `unmatched`.
    static func route(_ context: Context) -> String {
        context.endpointPath.flatMap { $0 == "NotFound" ? nil : $0 } ?? "unmatched"
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }
}

extension HTTPField.Name {
    static let traceParent = HTTPField.Name("traceparent")!
    static let traceState = HTTPField.Name("tracestate")!
}
