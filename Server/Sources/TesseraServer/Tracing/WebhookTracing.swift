import Tracing

/// The span of one webhook delivery attempt: a client span in the trace of the request that
/// produced the event (a new trace when the event had none), whose context the delivery carries.
enum WebhookTracing {
    static func attempt(
        _ message: WebhookSender.Delivery, stored: TraceHeaders?, delivery: ClaimedWebhookDelivery,
        tracer: any Tracer, isolation: isolated (any Actor)? = #isolation,
        send: (WebhookSender.Delivery) async -> WebhookOutcome
    ) async -> WebhookOutcome {
        var parent = ServiceContext.topLevel
        if let stored { tracer.extract(stored, into: &parent, using: TraceHeaders.Extractor()) }
        return await tracer.withSpan("webhook.deliver", context: parent, ofKind: .client) { span in
            span.attributes["http.request.method"] = "POST"
            span.attributes["tessera.webhook.id"] = delivery.webhookID
            span.attributes["tessera.event.id"] = delivery.eventID
            span.attributes["tessera.webhook.attempt"] = delivery.attempt + 1
            var message = message
            var carrier = TraceHeaders()
            tracer.inject(span.context, into: &carrier, using: TraceHeaders.Injector())
            message.traceParent = carrier.traceParent
            message.traceState = carrier.traceState
            let outcome = await send(message)
            if let status = outcome.statusCode { span.attributes["http.response.status_code"] = status }
            if outcome.kind != .delivered {
                span.setStatus(.init(code: .error, message: outcome.error?.rawValue))
            }
            return outcome
        }
    }
}

extension TraceHeaders {
    /// The trace context as an event keeps it (`trace_context`): the `traceparent`, then the
    /// `tracestate` on a line of its own when there is one (header values hold no line breaks).
    var stored: String? {
        guard let traceParent else { return nil }
        guard let traceState, !traceState.isEmpty else { return traceParent }
        return traceParent + "\n" + traceState
    }

    init?(stored: String) {
        let parts = stored.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, !first.isEmpty else { return nil }
        self.init(traceParent: String(first), traceState: parts.count > 1 ? String(parts[1]) : nil)
    }
}
