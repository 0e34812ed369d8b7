/// A migration or a node start refused because of the releases involved; nothing was changed.
public struct MigrationError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Reason: Sendable, Equatable {
        case contractedForNewerRelease(version: Int64, required: String, this: String)
        case olderNodesAlive(version: Int64, required: String, nodes: [NodeRecord])
        case expandPending([Int64])
    }

    private let reason: Reason

    /// The database ran contract step `version` for release `required`, newer than this build.
    static func contractedForNewerRelease(version: Int64, required: String, this: String) -> MigrationError {
        MigrationError(reason: .contractedForNewerRelease(version: version, required: required, this: this))
    }

    /// Contract step `version` needs release `required`, and these live nodes are older.
    static func olderNodesAlive(version: Int64, required: String, nodes: [NodeRecord]) -> MigrationError {
        MigrationError(reason: .olderNodesAlive(version: version, required: required, nodes: nodes))
    }

    /// Contract steps wait for these expand steps.
    static func expandPending(_ versions: [Int64]) -> MigrationError {
        MigrationError(reason: .expandPending(versions))
    }

    /// Whether a node of this build cannot run on the database (it must be upgraded).
    public var isContractedForNewerRelease: Bool {
        if case .contractedForNewerRelease = reason { return true }
        return false
    }

    /// The live nodes that block a contract step (empty for other refusals).
    public var blockingNodes: [NodeRecord] {
        if case .olderNodesAlive(_, _, let nodes) = reason { return nodes }
        return []
    }

    public var description: String {
        switch reason {
        case .contractedForNewerRelease(let version, let required, let this):
            return
                "The database's schema was contracted for release \(required) (step \(version)); this node is release \(this) and cannot run on it: upgrade it to \(required) or later."
        case .olderNodesAlive(let version, let required, let nodes):
            let list = nodes.map { "\($0.id) (release \($0.release))" }.joined(separator: ", ")
            return
                "Contract step \(version) needs every node on release \(required) or later, and these live nodes are older: \(list). Upgrade or stop them (a stopped node stops counting once its heartbeat is older than the alive window), then run tessera migrate contract again."
        case .expandPending(let versions):
            let list = versions.map(String.init).joined(separator: ", ")
            return
                "Expand steps \(list) are not applied yet: run tessera migrate expand (or start a node of this release) first."
        }
    }
}
