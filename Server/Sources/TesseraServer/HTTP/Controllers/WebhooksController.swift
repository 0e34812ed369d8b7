import Hummingbird
import TesseraTokens

private struct CreateWebhookBody: RequestBody {
    static let readMembers: Set<String>? = nil
    var url: String
    var types: [String]?
    var description: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case url, types, description
    }

    init(from decoder: any Decoder) throws {
        try WebhookRules.refuseUnknownMembers(decoder, known: CodingKeys.allCases.map(\.rawValue))
        let container = try decoder.container(keyedBy: CodingKeys.self)
        url = try container.decode(String.self, forKey: .url)
        types = try container.decodeIfPresent([String].self, forKey: .types)
        description = try container.decodeIfPresent(String.self, forKey: .description)
    }
}

private struct PatchWebhookBody: RequestBody {
    static let readMembers: Set<String>? = nil
    var patch = WebhookPatch()

    enum CodingKeys: String, CodingKey, CaseIterable {
        case url, types, enabled, description
    }

    init(from decoder: any Decoder) throws {
        try WebhookRules.refuseUnknownMembers(decoder, known: CodingKeys.allCases.map(\.rawValue))
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // `url` and `enabled` may be absent, but not null.
        if container.contains(.url) { patch.url = try container.decode(String.self, forKey: .url) }
        if container.contains(.types) {
            patch.types =
                try container.decodeNil(forKey: .types) ? [] : try container.decode([String].self, forKey: .types)
        }
        if container.contains(.enabled) { patch.enabled = try container.decode(Bool.self, forKey: .enabled) }
        if container.contains(.description) {
            patch.description = .some(
                try container.decodeNil(forKey: .description)
                    ? nil : try container.decode(String.self, forKey: .description))
        }
    }
}

/// The webhook endpoints of the admin API (secret key): create, list, read, change, delete and
/// rotate the signing secret. A webhook object never holds a secret; a secret is shown once.
struct WebhooksController: Sendable {
    let core: TesseraCore
    let bodies: BodyReader
    let addresses: ClientAddressReader

    /// How long a rotated-out secret keeps signing: 24 hours.
    static let previousSecretSeconds = AdminActions.previousWebhookSecretSeconds

    /// The webhook named in the path, of the key's project; 404 otherwise.
    func namedWebhook(_ context: TesseraRequestContext) throws -> (ProjectRuntime, String) {
        let id = try context.parameters.require("webhook_id")
        let runtime = try context.project()
        guard InputRules.isIdentifier(id, prefix: "whk_") else { throw CoreError.notFound }
        return (runtime, id)
    }

    /// `POST /v1/admin/webhooks` → 201 `{webhook, secret}`.
    func create(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let body = try await bodies.decode(CreateWebhookBody.self, from: request)
        let (record, secret) = try await AdminActions(core: core).createWebhook(
            runtime, url: body.url, types: body.types ?? [], description: body.description,
            origin: addresses.secretKeyOrigin(request, context: context))
        return .json(.created) { writer in
            writer.objectStart()
            writer.key("webhook")
            writer.webhook(record)
            writer.field("secret", secret)
            writer.objectEnd()
        }
    }

    func list(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let query = request.uri.queryParameters
        var limit = 50
        if let text = query.get("limit") {
            guard let value = Int(text), (1...200).contains(value) else {
                throw CoreError.invalidRequest("limit must be a whole number from 1 to 200.")
            }
            limit = value
        }
        let cursor = query.get("cursor")
        if let cursor, !InputRules.isIdentifier(cursor, prefix: "whk_") {
            throw CoreError.invalidRequest("cursor is not a cursor of this list.")
        }
        var page = try await core.store.webhooks(projectID: runtime.id, afterID: cursor, limit: limit + 1)
        let next = page.count > limit ? page[limit - 1].id : nil
        page = Array(page.prefix(limit))
        return .json { writer in
            writer.objectStart()
            writer.array("webhooks", page) { $0.webhook($1) }
            writer.field("next_cursor", next)
            writer.objectEnd()
        }
    }

    /// `GET /v1/admin/webhooks/{webhook_id}`
    func get(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let (runtime, id) = try namedWebhook(context)
        guard let webhook = try await core.store.webhook(projectID: runtime.id, id: id) else {
            throw CoreError.notFound
        }
        return Self.answer(webhook)
    }

    /// `PATCH /v1/admin/webhooks/{webhook_id}`: `url`, `types`, `enabled`, `description`.
    func update(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let (runtime, id) = try namedWebhook(context)
        let patch = try await bodies.decode(PatchWebhookBody.self, from: request).patch
        let webhook = try await AdminActions(core: core).updateWebhook(
            runtime, id: id, patch: patch, origin: addresses.secretKeyOrigin(request, context: context))
        return Self.answer(webhook)
    }

    /// `DELETE /v1/admin/webhooks/{webhook_id}` → 204.
    func delete(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let (runtime, id) = try namedWebhook(context)
        try await AdminActions(core: core).deleteWebhook(
            runtime, id: id, origin: addresses.secretKeyOrigin(request, context: context))
        return .noContent
    }

    /// `POST /v1/admin/webhooks/{webhook_id}/rotate-secret` → `{secret}`; the old secret keeps
    /// signing beside the new one for 24 hours.
    func rotateSecret(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let (runtime, id) = try namedWebhook(context)
        let secret = try await AdminActions(core: core).rotateWebhookSecret(
            runtime, id: id, origin: addresses.secretKeyOrigin(request, context: context))
        return .json { writer in
            writer.objectStart()
            writer.field("secret", secret)
            writer.objectEnd()
        }
    }

    private static func answer(_ webhook: WebhookRecord) -> Response {
        .json { writer in
            writer.objectStart()
            writer.key("webhook")
            writer.webhook(webhook)
            writer.objectEnd()
        }
    }
}

extension JSONWriter {
    /// A webhook object: never a secret.
    mutating func webhook(_ webhook: WebhookRecord) {
        objectStart()
        field("id", webhook.id)
        field("url", webhook.url)
        strings("types", webhook.types)
        field("description", webhook.description)
        field("enabled", webhook.enabled)
        time("created_at", webhook.createdAt)
        time("updated_at", webhook.updatedAt)
        time("disabled_at", webhook.disabledAt)
        field("disabled_reason", webhook.disabledReason)
        time("previous_secret_expires_at", webhook.previousSecretExpiresAt)
        objectEnd()
    }
}
