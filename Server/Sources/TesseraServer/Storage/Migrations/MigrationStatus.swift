import Foundation

/// What `tessera migrate status` prints: the steps applied (with kind and time), the steps of this
/// build still pending, and every live node with its release.
public struct MigrationStatus: Sendable {
    public let applied: [AppliedMigration]
    public let pendingExpand: [MigrationStep]
    public let pendingContract: [MigrationStep]
    public let liveNodes: [NodeRecord]
    public let aliveSeconds: Int64
    /// Set when this build cannot run on the database (a contract step of a newer release ran).
    public let refusal: MigrationError?

    /// Reads the state of `store`'s schema and registry at `now` (Unix seconds).
    public static func read(store: any SchemaStore, now: Int64, aliveSeconds: Int64) async throws -> MigrationStatus {
        let applied = try await store.appliedMigrations()
        let plan = MigrationPlan(steps: store.migrationSteps, release: TesseraRelease.version)
        var refusal: MigrationError? = nil
        do { try plan.checkCompatible(with: applied) } catch { refusal = error }
        return MigrationStatus(
            applied: applied, pendingExpand: plan.pending(.expand, applied: applied),
            pendingContract: plan.pending(.contract, applied: applied),
            liveNodes: try await store.liveNodes(now: now, aliveSeconds: aliveSeconds), aliveSeconds: aliveSeconds,
            refusal: refusal)
    }

    /// The report, one line per step and per node.
    public var text: String {
        var lines = ["This build: release \(TesseraRelease.version), schema \(TesseraRelease.schemaVersion)."]
        lines.append(applied.isEmpty ? "Applied steps: none." : "Applied steps:")
        for step in applied {
            var line = "  \(step.version)  \(step.kind.rawValue)  \(RFC3339.string(step.appliedAt))"
            if let required = step.requiredRelease { line += "  requires release \(required)" }
            if let release = step.appliedBy { line += "  applied by \(release)" }
            lines.append(line)
        }
        lines.append("Pending expand steps: " + Self.list(pendingExpand) + ".")
        lines.append("Pending contract steps: " + Self.list(pendingContract) + ".")
        lines.append(
            liveNodes.isEmpty
                ? "Live nodes (heartbeat within \(aliveSeconds) s): none."
                : "Live nodes (heartbeat within \(aliveSeconds) s):")
        for node in liveNodes {
            lines.append(
                "  \(node.id)  release \(node.release)  schema \(node.schemaVersion)  started \(RFC3339.string(node.startedAt))  heartbeat \(RFC3339.string(node.heartbeatAt))"
            )
        }
        if let refusal { lines.append(refusal.description) }
        return lines.joined(separator: "\n")
    }

    private static func list(_ steps: [MigrationStep]) -> String {
        steps.isEmpty
            ? "none"
            : steps.map { step in
                step.requiredRelease.map { "\(step.version) (release \($0))" } ?? "\(step.version)"
            }.joined(separator: ", ")
    }
}

extension ServerConfiguration {
    /// Opens the configured database without migrating it, for `tessera migrate`: migrating reads and
    /// writes no sealed value, so a missing master key is no obstacle.
    public func openStoreWithoutMigrating() throws -> any TesseraStore {
        let keys = (try? MasterKeySetup(configuration: self).keyring) ?? MasterKeyring(current: .generate())
        return try database.makeStore(masterKeys: keys)
    }
}
