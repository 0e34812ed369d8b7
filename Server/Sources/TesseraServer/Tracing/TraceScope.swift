import Tracing

/// The tracer of the request (or delivery) being traced, bound in its task only while tracing is on:
/// the storage backends read it to trace their work, and nothing else happens when it is nil.
enum TraceScope {
    @TaskLocal static var tracer: (any Tracer)?

    /// The trace context of the current span as an event keeps it (``TraceHeaders/stored``), when
    /// tracing is on and a span is current.
    static var traceContext: String? {
        guard let tracer, let context = ServiceContext.current else { return nil }
        var carrier = TraceHeaders()
        tracer.inject(context, into: &carrier, using: TraceHeaders.Injector())
        return carrier.stored
    }

    /// Runs `body` in a client span for a database operation when tracing is on.
    @inline(__always)
    static func database<T>(_ operation: String, system: String, _ body: () throws -> T) rethrows -> T {
        guard let tracer else { return try body() }
        return try tracer.withSpan(operation, ofKind: .client) { span in
            span.attributes["db.system.name"] = system
            span.attributes["db.operation.name"] = operation
            return try body()
        }
    }

    /// Runs `body` in a client span for a database operation when tracing is on.
    @inline(__always)
    static func database<T>(
        _ operation: String, system: String, isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> T
    ) async rethrows -> T {
        guard let tracer else { return try await body() }
        return try await tracer.withSpan(operation, ofKind: .client) { span in
            span.attributes["db.system.name"] = system
            span.attributes["db.operation.name"] = operation
            return try await body()
        }
    }
}

/// The trace context headers of a carrier: W3C `traceparent` and `tracestate`.
struct TraceHeaders: Sendable {
    var traceParent: String?
    var traceState: String?

    struct Injector: Tracing.Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout TraceHeaders) {
            switch key.lowercased() {
            case "traceparent": carrier.traceParent = value
            case "tracestate": carrier.traceState = value
            default: break
            }
        }
    }

    struct Extractor: Tracing.Extractor {
        func extract(key: String, from carrier: TraceHeaders) -> String? {
            switch key.lowercased() {
            case "traceparent": carrier.traceParent
            case "tracestate": carrier.traceState
            default: nil
            }
        }
    }
}
