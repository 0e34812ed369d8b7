/// A webhook endpoint of a project, with its signing secrets in plaintext (the store seals them).
public struct WebhookRecord: Sendable, Hashable {
    public var id: String
    public var projectID: String
    public var url: String
    /// The event types it receives; empty for every type.
    public var types: [String]
    public var description: String?
    public var enabled: Bool
    public var createdAt: Int64
    public var updatedAt: Int64
    /// When it was disabled (by PATCH, a Gone answer or failing deliveries); nil while enabled.
    public var disabledAt: Int64?
    /// Why it was disabled: `admin`, `gone` or `failing`.
    public var disabledReason: String?
    /// The current signing secret (`whsec_…`).
    public var secret: String
    /// The secret before the last rotation, which keeps signing until ``previousSecretExpiresAt``.
    public var previousSecret: String?
    public var previousSecretExpiresAt: Int64?

    public init(
        id: String, projectID: String, url: String, types: [String], description: String?, enabled: Bool,
        createdAt: Int64, updatedAt: Int64, disabledAt: Int64? = nil, disabledReason: String? = nil, secret: String,
        previousSecret: String? = nil, previousSecretExpiresAt: Int64? = nil
    ) {
        self.id = id
        self.projectID = projectID
        self.url = url
        self.types = types
        self.description = description
        self.enabled = enabled
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.disabledAt = disabledAt
        self.disabledReason = disabledReason
        self.secret = secret
        self.previousSecret = previousSecret
        self.previousSecretExpiresAt = previousSecretExpiresAt
    }

    /// The secrets that sign a delivery at `now`: the current one, then the previous one while it lives.
    public func signingSecrets(now: Int64) -> [String] {
        guard let previousSecret, let expires = previousSecretExpiresAt, expires > now else { return [secret] }
        return [secret, previousSecret]
    }

    /// Whether it receives events of `type`.
    public func receives(_ type: String) -> Bool { types.isEmpty || types.contains(type) }

    /// The types as stored: comma-separated, NULL for every type.
    var storedTypes: String? { types.isEmpty ? nil : types.joined(separator: ",") }

    static func types(stored: String?) -> [String] {
        stored.map { $0.split(separator: ",").map(String.init) } ?? []
    }
}

/// The changes of `PATCH /v1/admin/webhooks/{id}`: each member present is set, the others kept.
public struct WebhookPatch: Sendable, Hashable {
    public var url: String?
    /// New types (empty: every type).
    public var types: [String]?
    public var enabled: Bool?
    /// `.some(nil)` clears the description.
    public var description: String??

    public init(url: String? = nil, types: [String]? = nil, enabled: Bool? = nil, description: String?? = nil) {
        self.url = url
        self.types = types
        self.enabled = enabled
        self.description = description
    }
}
