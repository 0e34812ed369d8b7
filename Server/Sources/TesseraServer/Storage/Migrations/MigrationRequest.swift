/// What one migration run applies, and the node it registers in the same transaction.
public struct MigrationRequest: Sendable {
    /// `expand` (what `tessera serve` and `tessera migrate expand` run) or `contract`.
    public var kind: MigrationKind = .expand
    /// The node to register under the migration lock, after the checks (nil registers nothing).
    public var node: NodeRecord? = nil
    /// Unix seconds: when steps are recorded, and what a node's heartbeat is compared with.
    public var now: Int64
    /// A node whose heartbeat is at most this old is alive (blocks a contract step it cannot run on).
    public var aliveSeconds: Int64 = 60
    /// The release this build is (recorded with each step; a contract step for a newer one refuses it).
    public var release: String = TesseraRelease.version
    /// The steps this build knows; nil: the backend's own list.
    public var steps: [MigrationStep]? = nil
    /// SQLite: copy the database beside itself before applying a step to a database that has some.
    public var backup = true

    public init(kind: MigrationKind = .expand, node: NodeRecord? = nil, now: Int64, aliveSeconds: Int64 = 60) {
        self.kind = kind
        self.node = node
        self.now = now
        self.aliveSeconds = aliveSeconds
    }
}

/// What a migration run did.
public struct MigrationReport: Sendable, Equatable {
    /// The versions applied, in order.
    public var applied: [Int64] = []
    /// SQLite: the copy of the database taken before the first step, if one was.
    public var backupPath: String? = nil

    public init(applied: [Int64] = [], backupPath: String? = nil) {
        self.applied = applied
        self.backupPath = backupPath
    }
}
