import Hummingbird
import TesseraTokens

private struct ReplayBody: RequestBody {
    static let readMembers: Set<String>? = nil
    var eventID: String?
    var after: Int64?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case eventID = "event_id"
        case after
    }

    init(from decoder: any Decoder) throws {
        try WebhookRules.refuseUnknownMembers(decoder, known: CodingKeys.allCases.map(\.rawValue))
        let container = try decoder.container(keyedBy: CodingKeys.self)
        eventID = try container.decodeIfPresent(String.self, forKey: .eventID)
        after = try container.decodeIfPresent(Int64.self, forKey: .after)
    }
}

/// The delivery log, replay and test events of a webhook (secret key).
extension WebhooksController {
    /// `GET /v1/admin/webhooks/{webhook_id}/deliveries?status=&cursor=&limit=` → `{deliveries,
    /// next_cursor}`: each event queued for the endpoint with its latest attempt, most recently
    /// queued first.
    func deliveries(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let (runtime, id) = try namedWebhook(context)
        let query = request.uri.queryParameters
        var limit = 50
        if let text = query.get("limit") {
            guard let value = Int(text), (1...200).contains(value) else {
                throw CoreError.invalidRequest("limit must be a whole number from 1 to 200.")
            }
            limit = value
        }
        var state: WebhookDeliveryRecord.State?
        if let text = query.get("status") {
            guard let value = WebhookDeliveryRecord.State(rawValue: text) else {
                throw CoreError.invalidRequest("status must be pending, delivered or failed.")
            }
            state = value
        }
        let cursor = try query.get("cursor").map(Self.deliveryCursor)
        guard try await core.store.webhook(projectID: runtime.id, id: id) != nil else { throw CoreError.notFound }
        var page = try await core.store.webhookDeliveries(
            projectID: runtime.id, webhookID: id, state: state, before: cursor, limit: limit + 1)
        let next = page.count > limit ? page[limit - 1] : nil
        page = Array(page.prefix(limit))
        return .json { writer in
            writer.objectStart()
            writer.array("deliveries", page) { $0.delivery($1) }
            writer.field("next_cursor", next.map { "\($0.queuedAt).\($0.eventID)" })
            writer.objectEnd()
        }
    }

    /// A cursor of the delivery log: `QUEUED_AT.EVENT_ID`.
    static func deliveryCursor(_ text: String) throws -> WebhookDeliveryCursor {
        let parts = text.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, parts[0].count <= 12, parts[0].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let queuedAt = Int64(parts[0]), InputRules.isIdentifier(String(parts[1]), prefix: "evt_")
        else { throw CoreError.invalidRequest("cursor is not a cursor of this list.") }
        return WebhookDeliveryCursor(queuedAt: queuedAt, eventID: String(parts[1]))
    }

    /// `POST /v1/admin/webhooks/{webhook_id}/replay` `{event_id}` or `{after: SEQUENCE}` → 202
    /// `{queued}`: the event (or every event of the endpoint's types after the sequence, within
    /// the feed's retention) is delivered again, with a fresh retry schedule; an event the feed
    /// does not hold queues nothing.
    func replay(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let (runtime, id) = try namedWebhook(context)
        let body = try await bodies.decode(ReplayBody.self, from: request)
        let actions = AdminActions(core: core)
        let queued: Int
        switch (body.eventID, body.after) {
        case (let eventID?, nil):
            // An event the feed no longer holds (or never held) queues nothing.
            queued = try await actions.replayWebhookEvent(runtime, webhookID: id, eventID: eventID)
        case (nil, let after?):
            queued = try await actions.replayWebhookEvents(runtime, webhookID: id, afterSequence: after)
        default:
            throw CoreError.invalidRequest("Give either event_id or after.")
        }
        return .json(.accepted) { writer in
            writer.objectStart()
            writer.field("queued", queued)
            writer.objectEnd()
        }
    }

    /// `POST /v1/admin/webhooks/{webhook_id}/test`: queues a `webhook.test` event for this endpoint only.
    func test(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let (runtime, id) = try namedWebhook(context)
        let eventID = try await AdminActions(core: core).sendTestEvent(runtime, webhookID: id, actor: .secretKey)
        return .json(.accepted) { writer in
            writer.objectStart()
            writer.field("event_id", eventID)
            writer.objectEnd()
        }
    }
}

extension JSONWriter {
    /// One row of the delivery log.
    mutating func delivery(_ delivery: WebhookDeliveryRecord) {
        objectStart()
        field("event_id", delivery.eventID)
        field("event_type", delivery.eventType)
        key("sequence")
        if let sequence = delivery.sequence { integer(sequence) } else { null() }
        field("status", delivery.state.rawValue)
        field("attempt", delivery.attempt)
        key("status_code")
        if let code = delivery.statusCode { integer(Int64(code)) } else { null() }
        field("error", delivery.error)
        key("duration_ms")
        if let duration = delivery.durationMilliseconds { integer(duration) } else { null() }
        time("at", delivery.attemptedAt)
        time("next_attempt_at", delivery.nextAttemptAt)
        time("queued_at", delivery.queuedAt)
        objectEnd()
    }
}
