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
            writer.key("events")
            writer.arrayStart()
            for event in events { writer.event(event) }
            writer.arrayEnd()
            writer.field("next_after", events.last?.sequence ?? query.after)
            writer.objectEnd()
        }
    }
}

extension JSONWriter {
    /// An event as the feed (and webhook deliveries) show it: never its client address.
    mutating func event(_ event: EventRecord) {
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
        objectEnd()
    }
}
