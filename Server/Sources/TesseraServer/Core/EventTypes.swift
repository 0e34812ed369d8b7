/// The event types of the contract ("Events"), in one place: what a webhook may subscribe to.
///
/// Plain strings, free of HTTP and storage, so the events outbox and the webhooks share one list.
public enum EventTypes {
    /// Every event type, in the contract's order.
    public static let all: [String] = [
        "profile.promoted", "profile.merged", "profile.erased", "session.ended", "profile.created",
        "profile.updated", "profile.blocked", "profile.unblocked", "session.created", "device.registered",
        "device.removed", "project.updated", "identity_secret.created", "identity_secret.deleted",
        "api_key.rotated", "signing_key.rotated", "webhook.created", "webhook.updated", "webhook.deleted",
        "profile.new_key",
    ]

    /// The same list as a set, for membership checks.
    public static let known: Set<String> = Set(all)
}
