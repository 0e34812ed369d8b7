/// The events of webhook endpoints: identifiers, types and the names of changed fields, never a
/// secret or a URL (which may carry a credential of the receiver).
extension EventDraft {
    public static func webhookCreated(_ webhook: WebhookRecord) -> EventDraft {
        EventDraft(.webhookCreated, profileID: nil) {
            $0.field("webhook_id", webhook.id)
            $0.strings("types", webhook.types)
            $0.field("enabled", webhook.enabled)
        }
    }

    /// `changed` names what changed: `url`, `types`, `description`, `enabled` or `secret`.
    public static func webhookUpdated(webhookID: String, changed: [String]) -> EventDraft {
        EventDraft(.webhookUpdated, profileID: nil) {
            $0.field("webhook_id", webhookID)
            $0.strings("changed", changed)
        }
    }

    public static func webhookDeleted(webhookID: String) -> EventDraft {
        EventDraft(.webhookDeleted, profileID: nil) { $0.field("webhook_id", webhookID) }
    }
}

extension EventOrigin {
    /// The webhook dispatcher, when it disables an endpoint (a Gone answer, or failing for 5 days).
    public static let webhooks = EventOrigin(actor: EventActor(kind: .system, id: "webhooks"), clientAddress: nil)
}

extension WebhookRecord {
    /// The names of the fields that differ from `old` (`webhook.updated`'s `changed`).
    func changed(from old: WebhookRecord) -> [String] {
        var changed: [String] = []
        if url != old.url { changed.append("url") }
        if types != old.types { changed.append("types") }
        if description != old.description { changed.append("description") }
        if enabled != old.enabled { changed.append("enabled") }
        return changed
    }
}
