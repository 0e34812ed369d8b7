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
        let now = core.currentTime().seconds
        let queued: Int
        switch (body.eventID, body.after) {
        case (let eventID?, nil):
            guard InputRules.isIdentifier(eventID, prefix: "evt_") else {
                throw CoreError.invalidRequest("event_id is not an event ID.")
            }
            guard try await core.store.webhook(projectID: runtime.id, id: id) != nil else { throw CoreError.notFound }
            // An event the feed no longer holds (or never held) queues nothing.
            let found = try await core.store.replayWebhookEvent(
                projectID: runtime.id, webhookID: id, eventID: eventID, now: now)
            queued = found ? 1 : 0
        case (nil, let after?):
            guard after >= 0 else { throw CoreError.invalidRequest("after must be a sequence, 0 or more.") }
            guard
                let count = try await core.store.replayWebhookEvents(
                    projectID: runtime.id, webhookID: id, afterSequence: after, now: now)
            else { throw CoreError.notFound }
            queued = count
        default:
            throw CoreError.invalidRequest("Give either event_id or after.")
        }
        return .json(.accepted) { writer in
            writer.objectStart()
            writer.field("queued", queued)
            writer.objectEnd()
        }
    }

    /// `POST /v1/admin/webhooks/{webhook_id}/test` → 202 `{event_id}`: queues a synthetic
    /// `webhook.test` event (sequence 0, not in the feed, `data: {webhook_id}`) for the endpoint,
    /// whatever its types.
    func test(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let (runtime, id) = try namedWebhook(context)
        let now = core.currentTime().seconds
        let event = EventRecord(
            id: OpaqueToken.identifier(prefix: "evt_"), projectID: runtime.id, sequence: 0, type: "webhook.test",
            createdAt: now, actor: .secretKey, clientAddress: nil, profileID: nil, data: "{\"webhook_id\":\"\(id)\"}")
        var writer = JSONWriter()
        writer.event(event)
        guard
            try await core.store.queueWebhookTest(
                projectID: runtime.id, webhookID: id, event: event, body: String(decoding: writer.bytes, as: UTF8.self),
                now: now)
        else { throw CoreError.notFound }
        return .json(.accepted) { writer in
            writer.objectStart()
            writer.field("event_id", event.id)
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
