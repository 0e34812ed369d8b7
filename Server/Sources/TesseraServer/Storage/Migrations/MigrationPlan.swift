/// The decisions of a migration run, the same for every backend: which steps are pending, whether
/// this build may run on the database, and whether a contract step may run now.
struct MigrationPlan: Sendable {
    let steps: [MigrationStep]
    let release: String

    /// Refuses a database on which a contract step ran that this build does not know, or that names
    /// a newer release than this one.
    func checkCompatible(with applied: [AppliedMigration]) throws(MigrationError) {
        let known = Set(steps.map(\.version))
        let this = ReleaseVersion(release)
        for step in applied.sorted(by: { $0.version < $1.version }) where step.kind == .contract {
            let required = step.requiredRelease ?? "?"
            if !known.contains(step.version) || this < ReleaseVersion(required) {
                throw .contractedForNewerRelease(version: step.version, required: required, this: release)
            }
        }
    }

    /// The steps of `kind` not applied yet, in order.
    func pending(_ kind: MigrationKind, applied: [AppliedMigration]) -> [MigrationStep] {
        let done = Set(applied.map(\.version))
        return steps.filter { $0.kind == kind && !done.contains($0.version) }.sorted { $0.version < $1.version }
    }

    /// Refuses `contract` while expand steps are pending or a live node is older than a step's release.
    func checkContract(_ steps: [MigrationStep], applied: [AppliedMigration], liveNodes: [NodeRecord])
        throws(MigrationError)
    {
        let expand = pending(.expand, applied: applied)
        guard expand.isEmpty else { throw .expandPending(expand.map(\.version)) }
        for step in steps {
            let required = step.requiredRelease ?? release
            let older = liveNodes.filter { ReleaseVersion($0.release) < ReleaseVersion(required) }
            if !older.isEmpty {
                throw .olderNodesAlive(version: step.version, required: required, nodes: older.sorted { $0.id < $1.id })
            }
        }
    }

    /// The steps `request` applies on a database with `applied`, checked as every backend checks
    /// them inside its migration lock: this build may run on it, and a contract request finds no
    /// expand step pending. Contract steps are then checked against the live nodes
    /// (``checkContract(_:request:applied:nodes:)``).
    func steps(for request: MigrationRequest, applied: [AppliedMigration]) throws -> [MigrationStep] {
        try checkCompatible(with: applied)
        if request.kind == .contract {
            let expand = pending(.expand, applied: applied)
            guard expand.isEmpty else { throw MigrationError.expandPending(expand.map(\.version)) }
        }
        return pending(request.kind, applied: applied)
    }

    /// Refuses contract `steps` while a node alive at the request's time is older than a step's
    /// release; nothing for expand steps.
    func checkContract(
        _ steps: [MigrationStep], request: MigrationRequest, applied: [AppliedMigration], nodes: [NodeRecord]
    ) throws {
        guard request.kind == .contract, !steps.isEmpty else { return }
        let live = nodes.filter { $0.heartbeatAt >= request.now - request.aliveSeconds }
        try checkContract(steps, applied: applied, liveNodes: live)
    }

    /// The readiness of a node of this build on a database with these steps: `behind` while one of
    /// its expand steps is missing, `ahead` once a contract step for a newer release ran.
    func readiness(applied: [AppliedMigration]) -> Readiness.State {
        if (try? checkCompatible(with: applied)) == nil { return .ahead }
        return pending(.expand, applied: applied).isEmpty ? .passed : .behind
    }
}
