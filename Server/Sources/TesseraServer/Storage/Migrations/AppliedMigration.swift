/// A step recorded in the database's `schema_migrations` table.
public struct AppliedMigration: Sendable, Equatable {
    public let version: Int64
    /// `expand` for every step recorded before steps had kinds.
    public let kind: MigrationKind
    /// The oldest release that runs on the schema after a contract step; nil for expand steps.
    public let requiredRelease: String?
    /// Unix seconds.
    public let appliedAt: Int64
    /// The release of the node or command that applied it; nil for steps recorded before releases were.
    public let appliedBy: String?

    public init(
        version: Int64, kind: MigrationKind, requiredRelease: String?, appliedAt: Int64, appliedBy: String?
    ) {
        self.version = version
        self.kind = kind
        self.requiredRelease = requiredRelease
        self.appliedAt = appliedAt
        self.appliedBy = appliedBy
    }
}
