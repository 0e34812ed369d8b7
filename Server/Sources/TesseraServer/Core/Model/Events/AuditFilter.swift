/// Which audit entries to list: all of them, or those of one type, one actor, one profile and a
/// span of time, in any combination (the console's audit filters and its CSV export).
public struct AuditFilter: Sendable, Hashable {
    /// Who made the change.
    public enum Actor: Sendable, Hashable {
        /// The admin API with the project's secret key.
        case secretKey
        /// One operator, by ID.
        case `operator`(String)
    }

    public var type: String?
    public var actor: Actor?
    public var profileID: String?
    /// Entries created at or after this instant (Unix seconds).
    public var from: Int64?
    /// Entries created before this instant (Unix seconds).
    public var until: Int64?

    public init(
        type: String? = nil, actor: Actor? = nil, profileID: String? = nil, from: Int64? = nil, until: Int64? = nil
    ) {
        self.type = type
        self.actor = actor
        self.profileID = profileID
        self.from = from
        self.until = until
    }

    /// Every audit entry.
    public static let all = AuditFilter()

    /// The actor's `actor_type` and `actor_id` columns to match, nil where any matches.
    var actorColumns: (type: String?, id: String?) {
        switch actor {
        case nil: (nil, nil)
        case .secretKey: (EventActor.Kind.secretKey.rawValue, nil)
        case .operator(let id): (EventActor.Kind.operator.rawValue, id)
        }
    }
}
