import Foundation
import HTTPTypes
import InMemoryTracing
import Logging
import TesseraTokens
import Testing
import Tracing

@testable import TesseraServer

/// Tracing (issue 29): a request's span continues the caller's W3C trace, its database work is
/// beneath it, and the webhook attempts of the events it wrote run in that trace and carry it.
@Suite("Tracing")
struct TracingTests {
    /// `InMemoryTracer` propagating with W3C `traceparent` (its own headers are not W3C's), with
    /// W3C-sized random IDs.
    struct W3CMemoryTracer: Tracer {
        typealias Span = InMemorySpan
        let inner = InMemoryTracer(
            idGenerator: .init(
                nextTraceID: { W3CMemoryTracer.hex(16) }, nextSpanID: { W3CMemoryTracer.hex(8) }))

        static func hex(_ bytes: Int) -> String {
            (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        }

        func startSpan<Instant: TracerInstant>(
            _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
            at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
        ) -> InMemorySpan {
            inner.startSpan(
                operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID,
                line: line)
        }

        func activeSpan(identifiedBy context: ServiceContext) -> InMemorySpan? {
            inner.activeSpan(identifiedBy: context)
        }

        func forceFlush() { inner.forceFlush() }

        func inject<Carrier, Inject: Injector>(
            _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
        ) where Inject.Carrier == Carrier {
            guard let span = context.inMemorySpanContext else { return }
            injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
        }

        func extract<Carrier, Extract: Extractor>(
            _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
        ) where Extract.Carrier == Carrier {
            guard let value = extractor.extract(key: "traceparent", from: carrier) else { return }
            let parts = value.split(separator: "-")
            guard parts.count == 4, parts[1].count == 32, parts[2].count == 16 else { return }
            context.inMemorySpanContext = InMemorySpanContext(
                traceID: String(parts[1]), spanID: String(parts[2]), parentSpanID: nil)
        }
    }

    static let callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let callerSpan = "00f067aa0ba902b7"
    static let databaseOperations: Set<String> = ["read", "write", "transaction", "statement"]

    @Test(
        "A request continues the caller's trace, its database spans are its children, and its events' webhook attempts run in that trace and carry it",
        arguments: StoreBackend.allCases)
    func spanTree(backend: StoreBackend) async throws {
        let tracer = W3CMemoryTracer()
        let environment = try await TestEnvironment.make(backend: backend) {
            $0.tracing = ServerTracing(tracer: tracer)
        }
        try await environment.storeWebhook(types: ["profile.created", "session.created"])
        #expect(tracer.inner.finishedSpans.isEmpty, "no span outside a traced request or delivery")

        // The application's store closes when it stops: everything runs while it serves.
        try await environment.withApp { client in
            let installation = UUID().uuidString.lowercased()
            let reply = try await client.send(
                .post, "/v1/sessions/anonymous", bearer: client.publishableKey,
                body:
                    #"{"installation_id":"\#(installation)","installation_secret":"\#(OpaqueToken.installationSecret())"}"#,
                headers: [HTTPField.Name("traceparent")!: "00-\(Self.callerTrace)-\(Self.callerSpan)-01"])
            #expect(reply.status.code < 300)
            try await Self.checkSpans(tracer: tracer, environment: environment, backend: backend)
        }
    }

    static func checkSpans(tracer: W3CMemoryTracer, environment: TestEnvironment, backend: StoreBackend) async throws {
        let spans = tracer.inner.finishedSpans
        let server = try #require(spans.first { $0.kind == .server })
        #expect(server.operationName == "POST /v1/sessions/anonymous")
        #expect(server.traceID == Self.callerTrace)
        #expect(server.parentSpanID == Self.callerSpan)
        #expect(server.attributes["http.route"]?.toSpanAttribute() == "/v1/sessions/anonymous")
        let database = spans.filter { Self.databaseOperations.contains($0.operationName) }
        #expect(!database.isEmpty)
        for span in database {
            #expect(span.kind == .client)
            #expect(span.traceID == Self.callerTrace)
            #expect(span.parentSpanID == server.spanID, "database work runs beneath the request")
        }
        let system = backend == .sqlite ? "sqlite" : "postgresql"
        #expect(database.allSatisfy { $0.attributes["db.system.name"]?.toSpanAttribute() == system.toSpanAttribute() })
        let writes = database.filter { $0.operationName == "write" || $0.operationName == "transaction" }
        #expect(!writes.isEmpty)

        // The dispatcher of a node with tracing on sends the request's events in its trace.
        tracer.inner.clearFinishedSpans()
        let receiver = WebhookDeliveryTests.Receiver()
        let clock = environment.clock
        let dispatcher = WebhookDispatcher(
            store: environment.store, transport: receiver.transport, now: { clock.now }, tracer: tracer,
            logger: Logger(label: "test"))
        #expect(await dispatcher.runOnce() == 2)
        let attempts = tracer.inner.finishedSpans.filter { $0.operationName == "webhook.deliver" }
        #expect(attempts.count == 2)
        for sent in receiver.sent {
            let attempt = try #require(
                attempts.first {
                    $0.attributes["tessera.event.id"]?.toSpanAttribute() == sent.delivery.id.toSpanAttribute()
                })
            #expect(attempt.kind == .client)
            #expect(attempt.traceID == Self.callerTrace, "the delivery attempt is in the request's trace")
            #expect(writes.contains { $0.spanID == attempt.parentSpanID }, "beneath the write of its event")
            #expect(sent.delivery.traceParent == "00-\(Self.callerTrace)-\(attempt.spanID)-01")
            let headers = WebhookSender.headers(for: sent.delivery, secrets: sent.secrets)
            #expect(headers.contains { $0.0 == "traceparent" && $0.1 == sent.delivery.traceParent })
        }
    }

    @Test("Tracing off: the configuration has none, and an untraced event's delivery carries no traceparent")
    func off() async throws {
        let environment = try await TestEnvironment.make()
        #expect(environment.configuration.tracing == nil)
        try await environment.storeWebhook(types: ["profile.created"])
        try await environment.withApp { client in
            let reply = try await client.send(
                .post, "/v1/sessions/anonymous", bearer: client.publishableKey,
                body:
                    #"{"installation_id":"\#(UUID().uuidString.lowercased())","installation_secret":"\#(OpaqueToken.installationSecret())"}"#,
                headers: [HTTPField.Name("traceparent")!: "00-\(Self.callerTrace)-\(Self.callerSpan)-01"])
            #expect(reply.status.code < 300)
            let receiver = WebhookDeliveryTests.Receiver()
            let clock = environment.clock
            let dispatcher = WebhookDispatcher(
                store: environment.store, transport: receiver.transport, now: { clock.now },
                logger: Logger(label: "test"))
            #expect(await dispatcher.runOnce() == 1)
            #expect(receiver.sent.map(\.delivery.traceParent) == [nil])
        }
    }

    @Test("The environment turns tracing on with an OTLP endpoint or TESSERA_TRACING, and OTEL_SDK_DISABLED off")
    func environment() throws {
        #expect(try ServerTracing.enabled(in: [:]) == false)
        #expect(try ServerTracing.enabled(in: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"]))
        #expect(try ServerTracing.enabled(in: ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"]))
        #expect(try ServerTracing.enabled(in: ["TESSERA_TRACING": "otlp"]))
        #expect(
            try ServerTracing.enabled(in: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "TESSERA_TRACING": "off"])
                == false)
        #expect(
            try ServerTracing.enabled(in: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"])
                == false)
        #expect(throws: ConfigurationError.self) { try ServerTracing.enabled(in: ["TESSERA_TRACING": "yes please"]) }
        #expect(throws: ConfigurationError.self) {
            try ServerTracing.enabled(in: ["TESSERA_TRACING": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"])
        }
        #expect(
            try ServerTracing.enabled(in: [
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            ]))
    }

    @Test("An event keeps the trace state beside the traceparent, and reads both back")
    func storedContext() {
        let both = TraceHeaders(traceParent: "00-\(Self.callerTrace)-\(Self.callerSpan)-01", traceState: "a=1,b=2")
        #expect(both.stored == "00-\(Self.callerTrace)-\(Self.callerSpan)-01\na=1,b=2")
        let read = TraceHeaders(stored: both.stored!)
        #expect(read?.traceParent == both.traceParent && read?.traceState == "a=1,b=2")
        #expect(TraceHeaders(traceParent: "00-x-y-01", traceState: nil).stored == "00-x-y-01")
        #expect(TraceHeaders(stored: "") == nil)
    }
}
