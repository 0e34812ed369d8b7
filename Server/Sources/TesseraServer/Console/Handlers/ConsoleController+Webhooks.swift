import HTTPTypes
import Hummingbird

/// The webhook pages: the endpoints, one endpoint with its deliveries, and their actions.
///
/// A webhook's signing secret is shown once, when the endpoint is made or its secret rotated, and
/// only to an admin who entered their password with the form.
extension ConsoleController {
    func webhookPages() -> [(HTTPRequest.Method, String, Requirement, Handler)] {
        [
            (.get, "/console/webhooks", Requirement(), webhooks),
            (.get, "/console/webhook", Requirement(), webhook),
            (
                .post, "/console/webhook-create", Requirement(role: .admin, password: true, back: .webhooks),
                createWebhook
            ),
            (.post, "/console/webhook-update", Requirement(role: .admin, back: .webhook), updateWebhook),
            (.post, "/console/webhook-edit", Requirement(role: .admin, back: .webhook), editWebhook),
            (
                .post, "/console/webhook-delete", Requirement(role: .admin, password: true, back: .webhook),
                deleteWebhook
            ),
            (
                .post, "/console/webhook-rotate", Requirement(role: .admin, password: true, back: .webhook),
                rotateWebhookSecret
            ),
            (.post, "/console/webhook-replay", Requirement(role: .admin, back: .webhook), replayWebhook),
            (.post, "/console/webhook-test", Requirement(role: .admin, back: .webhook), testWebhook),
        ]
    }

    /// `GET /console/webhooks`
    func webhooks(_ request: ConsoleRequest) async throws -> Response {
        try await webhooks(request, message: nil, status: .ok)
    }

    /// The event types an endpoint may ask for, listed under the form.
    static let typeHint = "Event types, comma-separated (empty: every type)"

    private func webhooks(_ request: ConsoleRequest, message: ConsoleMessage?, status: HTTPResponse.Status)
        async throws -> Response
    {
        let list = try await core.store.webhooks(projectID: request.runtime.id, afterID: nil, limit: 200)
        var states: [String: String] = [:]
        for webhook in list { states[webhook.id] = try await state(request.runtime, webhook) }
        return page(
            request, WebhooksPage(webhooks: list, states: states, viewer: request.viewer, refusal: request.refusal),
            message: message, status: status)
    }

    /// How many of an endpoint's latest attempts its state is read from.
    static let stateAttempts = 3

    /// An endpoint's state from its latest attempts (newest first): disabled; "failing" when every one
    /// of them failed (at once, from the first failed attempt); "retrying" when the latest failed
    /// after a success; "delivering" when the latest succeeded.
    static func state(_ webhook: WebhookRecord, attempts: [WebhookAttemptRecord]) -> String {
        if !webhook.enabled { return "disabled (\(webhook.disabledReason ?? "admin"))" }
        guard let latest = attempts.first else { return "no attempt yet" }
        if latest.succeeded { return "delivering" }
        let outcomes = attempts.map(Self.outcome)
        let summary = Set(outcomes).count == 1 ? outcomes[0] : outcomes.joined(separator: ", ")
        if attempts.allSatisfy({ !$0.succeeded }) {
            return attempts.count == 1
                ? "failing: the last attempt \(summary)" : "failing: last \(attempts.count) attempts \(summary)"
        }
        return "retrying: the last attempt \(outcomes[0])"
    }

    /// "HTTP 500", "timeout".
    static func outcome(_ attempt: WebhookAttemptRecord) -> String {
        attempt.statusCode.map { "HTTP \($0)" } ?? attempt.error ?? "no answer"
    }

    /// The state of an endpoint, read from its latest attempts.
    func state(_ runtime: ProjectRuntime, _ webhook: WebhookRecord) async throws -> String {
        Self.state(
            webhook,
            attempts: try await core.store.webhookAttempts(
                projectID: runtime.id, webhookID: webhook.id, eventID: nil, limit: Self.stateAttempts))
    }

    /// `POST /console/webhook-create`: shows the new endpoint's secret once.
    func createWebhook(_ request: ConsoleRequest) async throws -> Response {
        let (url, types) = try checkedURLAndTypes(request)
        let (webhook, secret) = try await actions.createWebhook(
            request.runtime, url: url, types: types, description: request.form.value("description"),
            origin: request.origin(addresses: addresses))
        return try await redirect(
            request, to: ConsoleURL("webhook", [("id", webhook.id)]),
            flash: [("secret", secret), ("notice", "The endpoint was added.")])
    }

    /// `GET /console/webhook?id=&status=&cursor=`
    func webhook(_ request: ConsoleRequest) async throws -> Response {
        let flash = try await takeFlash(request)
        return try await webhook(
            request, id: request.query.value("id") ?? "", secret: flash.fields?["secret"], message: flash.message)
    }

    private func webhook(_ request: ConsoleRequest, id: String, secret: String?, message: ConsoleMessage?)
        async throws -> Response
    {
        let runtime = request.runtime
        guard InputRules.isIdentifier(id, prefix: "whk_"),
            let webhook = try await core.store.webhook(projectID: runtime.id, id: id)
        else { throw CoreError.notFound }
        var state: WebhookDeliveryRecord.State?
        if let text = request.query.value("status") {
            guard let value = WebhookDeliveryRecord.State(rawValue: text) else {
                throw CoreError.invalidRequest("status must be pending, delivered or failed.")
            }
            state = value
        }
        let cursor = try request.query.value("cursor").map(WebhooksController.deliveryCursor)
        let deliveries = try await core.store.webhookDeliveries(
            projectID: runtime.id, webhookID: id, state: state, before: cursor, limit: 51)
        let shown = Array(deliveries.prefix(50))
        let next = deliveries.count > 50 ? shown.last.map { "\($0.queuedAt).\($0.eventID)" } : nil
        let recent = try await core.store.webhookAttempts(
            projectID: runtime.id, webhookID: id, eventID: nil, limit: 20)
        let shownState = Self.state(webhook, attempts: Array(recent.prefix(Self.stateAttempts)))
        let eventID = request.query.value("event").flatMap { InputRules.isIdentifier($0, prefix: "evt_") ? $0 : nil }
        var messageAttempts: [WebhookAttemptRecord] = []
        if let eventID {
            messageAttempts = try await core.store.webhookAttempts(
                projectID: runtime.id, webhookID: id, eventID: eventID, limit: 50)
        }
        return page(
            request,
            WebhookPage(
                webhook: webhook, secret: secret, state: shownState, statusFilter: request.query.value("status"),
                deliveries: shown, next: next, recent: recent, eventID: eventID, eventAttempts: messageAttempts,
                viewer: request.viewer, refusal: request.refusal),
            message: message)
    }

    /// `POST /console/webhook-edit`: the URL, the event types and the description.
    func editWebhook(_ request: ConsoleRequest) async throws -> Response {
        let id = request.form["webhook_id"] ?? ""
        let (url, types) = try checkedURLAndTypes(request)
        var patch = WebhookPatch()
        patch.url = url
        patch.types = types
        patch.description = .some(request.form.value("description"))
        _ = try await actions.updateWebhook(
            request.runtime, id: id, patch: patch, origin: request.origin(addresses: addresses))
        return ConsoleHTTP.redirect(ConsoleURL("webhook", [("id", id), ("notice", "webhook-updated")]))
    }

    /// `POST /console/webhook-update`: enables or disables the endpoint.
    func updateWebhook(_ request: ConsoleRequest) async throws -> Response {
        let id = request.form["webhook_id"] ?? ""
        var patch = WebhookPatch()
        switch request.form["enabled"] {
        case "true": patch.enabled = true
        case "false": patch.enabled = false
        default: throw CoreError.invalidRequest("enabled must be true or false.")
        }
        _ = try await actions.updateWebhook(
            request.runtime, id: id, patch: patch, origin: request.origin(addresses: addresses))
        return ConsoleHTTP.redirect(ConsoleURL("webhook", [("id", id), ("notice", "webhook-updated")]))
    }

    /// `POST /console/webhook-delete`
    func deleteWebhook(_ request: ConsoleRequest) async throws -> Response {
        try await actions.deleteWebhook(
            request.runtime, id: request.form["webhook_id"] ?? "", origin: request.origin(addresses: addresses))
        return ConsoleHTTP.redirect(ConsoleURL("webhooks", [("notice", "webhook-deleted")]))
    }

    /// `POST /console/webhook-rotate`: shows the new secret once.
    func rotateWebhookSecret(_ request: ConsoleRequest) async throws -> Response {
        let id = request.form["webhook_id"] ?? ""
        let secret = try await actions.rotateWebhookSecret(
            request.runtime, id: id, origin: request.origin(addresses: addresses))
        return try await redirect(
            request, to: ConsoleURL("webhook", [("id", id)]),
            flash: [
                ("secret", secret), ("notice", "The secret was rotated; the old one signs beside it for 24 hours."),
            ])
    }

    /// `POST /console/webhook-replay`: one event (`event_id`) or every event after a sequence (`after`).
    func replayWebhook(_ request: ConsoleRequest) async throws -> Response {
        let id = request.form["webhook_id"] ?? ""
        let queued: Int
        if let eventID = request.form.value("event_id") {
            queued = try await actions.replayWebhookEvent(request.runtime, webhookID: id, eventID: eventID)
        } else if let after = request.form.value("after") {
            guard after.utf8.count <= 19, let sequence = Int64(after) else {
                throw ConsoleFailure.invalid(
                    "after", "Give a sequence number (the Sequence column of the deliveries below).")
            }
            queued = try await actions.replayWebhookEvents(request.runtime, webhookID: id, afterSequence: sequence)
        } else {
            throw ConsoleFailure.invalid("after", "Give a sequence to replay after.")
        }
        return try await redirect(
            request, to: ConsoleURL("webhook", [("id", id)]),
            flash: [("notice", queued == 1 ? "1 event was queued again." : "\(queued) events were queued again.")])
    }

    /// `POST /console/webhook-test`
    func testWebhook(_ request: ConsoleRequest) async throws -> Response {
        let id = request.form["webhook_id"] ?? ""
        _ = try await actions.sendTestEvent(
            request.runtime, webhookID: id, actor: EventActor(kind: .operator, id: request.viewer.operatorID))
        return ConsoleHTTP.redirect(ConsoleURL("webhook", [("id", id), ("notice", "test-sent")]))
    }

    /// The form's `url` and `types`, each rule checked on its own first, so that a refusal is shown
    /// beside its field (creating and editing an endpoint).
    private func checkedURLAndTypes(_ request: ConsoleRequest) throws -> (url: String, types: [String]) {
        let url = request.form.value("url") ?? ""
        let types = (request.form.value("types") ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
        do {
            _ = try WebhookRules.url(url, allowInsecure: core.configuration.allowInsecureWebhooks)
        } catch let error as CoreError {
            throw ConsoleFailure.invalid("url", error.message, code: error.code.rawValue)
        }
        do {
            _ = try WebhookRules.types(types)
        } catch let error as CoreError {
            throw ConsoleFailure.invalid("types", error.message, code: error.code.rawValue)
        }
        return (url, types)
    }
}
