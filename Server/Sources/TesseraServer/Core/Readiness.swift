/// Whether a node may take traffic: its database answers, the database's schema has every expand
/// step of this build and no contract step of a newer release, its master key is loaded, and it is
/// not draining (`GET /health/ready`).
///
/// Liveness (`GET /health/live`) asks nothing of this: a live node that is not ready should be
/// taken out of the load balancer, not restarted.
struct Readiness: Sendable {
    let store: any TesseraStore
    let activity: NodeActivity
    /// Whether the master keys opened every sealed value of the database when the node started.
    let masterKeyVerified: Bool
    /// The schema version this build expects.
    var expectedSchemaVersion = TesseraRelease.schemaVersion
    /// The release this build is (a contract step for a newer one makes the schema `ahead`).
    var release = TesseraRelease.version

    /// The state of one check, as the wire names it.
    enum State: String, Sendable {
        case passed = "ok"
        /// The database does not answer.
        case unavailable
        /// An expand step of this build has not run on the database.
        case behind
        /// A contract step for a newer release ran on the database: this build cannot run on it.
        case ahead
        /// The schema version could not be read (the database does not answer).
        case unknown
        /// The master keys were not verified against the database, or do not seal and open.
        case unverified
    }

    /// The outcome of every check.
    struct Report: Sendable, Equatable {
        var database: State
        var migrations: State
        var masterKey: State
        /// The schema version the database holds; nil when it could not be read.
        var databaseSchemaVersion: Int64?
        var expectedSchemaVersion: Int64
        var draining: Bool

        var isReady: Bool { !draining && failedChecks.isEmpty }

        /// The wire names of the checks that failed, in the order they are reported.
        var failedChecks: [String] {
            [("database", database), ("migrations", migrations), ("master_key", masterKey)].compactMap {
                $0.1 == .passed ? nil : $0.0
            }
        }

        /// `ready`, `draining` or `not_ready`.
        var status: String { draining ? "draining" : isReady ? "ready" : "not_ready" }

        /// A sentence for the error's message: what is wrong, without any secret.
        var message: String {
            if draining { return "The node is shutting down: it finishes what it has and takes nothing new." }
            var reasons: [String] = []
            if database != .passed { reasons.append("the database does not answer") }
            switch migrations {
            case .behind:
                let seen = databaseSchemaVersion.map(String.init) ?? "?"
                reasons.append(
                    "the database's schema is version \(seen), this build expects \(expectedSchemaVersion)")
            case .ahead:
                let seen = databaseSchemaVersion.map(String.init) ?? "?"
                reasons.append(
                    "the database's schema (version \(seen)) was contracted for a newer release than this build's \(expectedSchemaVersion): upgrade the node"
                )
            case .unknown where database == .passed: reasons.append("the schema version cannot be read")
            default: break
            }
            if masterKey != .passed { reasons.append("the master key is not loaded") }
            return "Not ready: " + reasons.joined(separator: "; ") + "."
        }
    }

    /// Runs every check: one query for the schema version (which is also the database's check) and a
    /// seal and open under the current master key.
    func check() async -> Report {
        var report = Report(
            database: .passed, migrations: .passed, masterKey: .passed, databaseSchemaVersion: nil,
            expectedSchemaVersion: expectedSchemaVersion, draining: activity.isDraining)
        do {
            // Current: every expand step of this build is applied, and no contract step for a newer
            // release ran. Newer expand steps (a newer node's) and pending contract steps are fine.
            let applied = try await store.appliedMigrations()
            report.databaseSchemaVersion = applied.map(\.version).max() ?? 0
            report.migrations = MigrationPlan(steps: store.migrationSteps, release: release).readiness(applied: applied)
        } catch {
            report.database = .unavailable
            report.migrations = .unknown
        }
        if !masterKeyVerified || !Self.sealsAndOpens(store.masterKeys) { report.masterKey = .unverified }
        return report
    }

    /// Whether the current master key seals a value that the ring opens again.
    static func sealsAndOpens(_ keys: MasterKeyring) -> Bool {
        let binding = SecretBinding(table: "readiness", column: "probe", projectID: "", rowID: "")
        let probe: [UInt8] = Array("tessera readiness".utf8)
        return (try? keys.open(keys.seal(probe, binding: binding), binding: binding)) == probe
    }
}
