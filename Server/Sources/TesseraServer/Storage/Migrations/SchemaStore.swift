import Foundation

/// The part of a store that migrates its schema and keeps the registry of running nodes.
///
/// Both backends apply a ``MigrationRequest`` the same way, in one transaction under the migration
/// lock (PostgreSQL: an advisory lock; SQLite: the write lock): create or widen `schema_migrations`,
/// refuse a database contracted for a newer release (``MigrationError``), apply the pending steps of
/// the requested kind in order (a contract step only while no older node is alive), then register
/// the request's node. The decisions are ``MigrationPlan``'s, shared by both.
public protocol SchemaStore: Sendable {
    /// The steps this backend knows (`SQLiteMigrations.all` or `PostgresMigrations.all`).
    var migrationSteps: [MigrationStep] { get }
    /// Applies the request's pending steps under the migration lock; see the protocol's discussion.
    func migrate(_ request: MigrationRequest) async throws -> MigrationReport
    /// Every step recorded in the database, oldest first (empty before the first migration).
    func appliedMigrations() async throws -> [AppliedMigration]
    /// Inserts or refreshes a node's row in the registry.
    func heartbeat(node: NodeRecord) async throws
    /// Deletes a node's row (a graceful shutdown); nothing when there is none.
    func removeNode(id: String) async throws
    /// Every node in the registry, alive or not, oldest start first.
    func nodes() async throws -> [NodeRecord]
}

extension SchemaStore {
    /// Applies the pending expand steps, as `tessera serve` does (registering no node).
    public func migrate() async throws {
        _ = try await migrate(MigrationRequest(now: Int64(Date().timeIntervalSince1970)))
    }

    /// The nodes whose heartbeat is at most `aliveSeconds` old at `now`.
    public func liveNodes(now: Int64, aliveSeconds: Int64) async throws -> [NodeRecord] {
        try await nodes().filter { $0.heartbeatAt >= now - aliveSeconds }
    }
}
