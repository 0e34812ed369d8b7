import Hummingbird

extension AdminController {
    /// `GET /v1/admin/events?after=&types=&profile_id=&limit=`: the feed, in sequence order.
    ///
    /// `next_after` is the sequence of the last event answered (or `after` when none was): reading
    /// again with it never skips or repeats an event.
    func listEvents(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let parameters = request.uri.queryParameters
        let query = try EventFeedQuery.parse(
            projectID: runtime.id, after: parameters.get("after"), types: parameters.get("types"),
            profileID: parameters.get("profile_id"), limit: parameters.get("limit"))
        let events = try await core.store.events(query)
        return .json { writer in
            writer.objectStart()
            writer.array("events", events) { $0.event($1) }
            writer.field("next_after", events.last?.sequence ?? query.after)
            writer.objectEnd()
        }
    }

    /// `GET /v1/admin/audit?cursor=&limit=`: the changes made with the secret key or by an operator,
    /// newest first, each with the client address it came from.
    func listAudit(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let parameters = request.uri.queryParameters
        let (before, limit) = try AuditQuery.parse(cursor: parameters.get("cursor"), limit: parameters.get("limit"))
        let events = try await core.store.auditEvents(projectID: runtime.id, before: before, limit: limit)
        return .json { writer in
            writer.objectStart()
            writer.array("events", events) { $0.event($1, audit: true) }
            writer.field("next_cursor", events.count == limit ? events.last.map { String($0.sequence) } : nil)
            writer.objectEnd()
        }
    }
}

extension JSONWriter {
    /// An event as the feed (and webhook deliveries) show it: never its client address, which only
    /// the audit log shows (with the operator's reason, when one was given).
    mutating func event(_ event: EventRecord, audit: Bool = false) {
        objectStart()
        field("id", event.id)
        field("sequence", event.sequence)
        field("type", event.type)
        time("created_at", event.createdAt)
        key("actor")
        objectStart()
        field("type", event.actor.kind.rawValue)
        field("id", event.actor.id)
        objectEnd()
        key("data")
        raw(Array(event.data.utf8))
        if audit {
            field("client_address", event.clientAddress)
            field("reason", event.reason)
        }
        objectEnd()
    }
}
