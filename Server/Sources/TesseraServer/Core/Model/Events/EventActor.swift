/// Who caused an event: an SDK call, the project's secret key, an operator or the server itself.
public struct EventActor: Sendable, Hashable {
    /// The kind of credential behind a change.
    public enum Kind: String, Sendable, CaseIterable {
        case sdk
        case secretKey = "secret_key"
        case `operator`
        case system
    }

    public var kind: Kind
    /// The session (SDK), operator or service that acted, when known.
    public var id: String?

    public init(kind: Kind, id: String?) {
        self.kind = kind
        self.id = id
    }

    /// An SDK call, by the session that made it when there was one.
    public static func sdk(sessionID: String?) -> EventActor { EventActor(kind: .sdk, id: sessionID) }
    /// A call of the admin API with the project's secret key.
    public static let secretKey = EventActor(kind: .secretKey, id: nil)
    /// The server's cleanup service.
    public static let cleanup = EventActor(kind: .system, id: "cleanup")
    /// The server itself (for example an automatic signing-key rotation).
    public static let system = EventActor(kind: .system, id: nil)
}

/// The actor of a change and the client address it came from, recorded with its events (audit).
public struct EventOrigin: Sendable, Hashable {
    public var actor: EventActor
    /// The client's address (its rate-limit key), or nil for the server's own changes.
    public var clientAddress: String?
    /// Why an operator made the change, as they typed it in the console (audit); nil otherwise.
    public var reason: String?

    public init(actor: EventActor, clientAddress: String?, reason: String? = nil) {
        self.actor = actor
        self.clientAddress = clientAddress
        self.reason = reason
    }

    /// The cleanup service.
    public static let cleanup = EventOrigin(actor: .cleanup, clientAddress: nil)
    /// The server itself.
    public static let system = EventOrigin(actor: .system, clientAddress: nil)
}
