import Foundation
import Logging
import ServiceLifecycle
import Testing

@testable import TesseraServer

/// Expand and contract steps, the node registry, and the refusals between releases, on every backend.
@Suite("Migrations: expand, contract and the node registry")
struct MigrationTests {
    private static let now: Int64 = 1_795_000_000

    /// A store migrated by this build, with nothing else in it.
    private func migratedStore(_ backend: StoreBackend) async throws -> any TesseraStore {
        let store = try backend.makeStore()
        try await store.migrate()
        return store
    }

    private func node(_ id: String, release: String, heartbeatAt: Int64 = now) -> NodeRecord {
        NodeRecord(id: id, release: release, schemaVersion: 1, startedAt: heartbeatAt - 5, heartbeatAt: heartbeatAt)
    }

    /// This build's steps and a contract step that ships in release `0.4.0`.
    private func withContract(_ store: any TesseraStore, version: Int64 = 1_000) -> [MigrationStep] {
        store.migrationSteps + [.contract(version, release: "0.4.0", "CREATE TABLE contract_probe (id TEXT)")]
    }

    @Test("Every step so far is an expand step, numbered and kinded alike on both backends")
    func stepsMatch() {
        #expect(SQLiteMigrations.all.map(\.version) == PostgresMigrations.all.map(\.version))
        #expect(SQLiteMigrations.all.map(\.version) == Array(1...Int64(SQLiteMigrations.all.count)))
        #expect(SQLiteMigrations.all.map(\.kind) == PostgresMigrations.all.map(\.kind))
        #expect(SQLiteMigrations.all.allSatisfy { $0.kind == .expand && $0.requiredRelease == nil })
    }

    @Test("The alive window and the startup wait are configurable, and bad values are refused")
    func settings() throws {
        #expect(ServerConfiguration().nodeAliveSeconds == 60)
        #expect(try ServerConfiguration.fromEnvironment(["TESSERA_NODE_ALIVE_SECONDS": "90"]).nodeAliveSeconds == 90)
        for bad in ["0", "-5", "ninety", "86401"] {
            #expect(throws: ConfigurationError.self) {
                try ServerConfiguration.fromEnvironment(["TESSERA_NODE_ALIVE_SECONDS": bad])
            }
        }
        #expect(try PostgresConfiguration(url: "postgres://u@h/db").startupTimeout == .seconds(120))
        #expect(try PostgresConfiguration(url: "postgres://u@h/db?startup_timeout=5").startupTimeout == .seconds(5))
        #expect(throws: ConfigurationError.self) {
            try PostgresConfiguration(url: "postgres://u@h/db?startup_timeout=x")
        }
    }

    @Test("A PostgreSQL server that never answers is tried until the startup timeout, then refused")
    func unreachableDatabase() async throws {
        // Port 1 on loopback: nothing listens there.
        let store = PostgresStore(
            configuration: try PostgresConfiguration(
                url:
                    "postgres://tessera:secret@127.0.0.1:1/tessera?connect_timeout=1&operation_timeout=1&startup_timeout=2"
            ),
            masterKeys: TestMasterKeys.keyring)
        let started = ContinuousClock.now
        await #expect(throws: CoreError.unavailable) { try await store.migrate() }
        // Tried again for the startup timeout, not refused at the first failure.
        #expect(ContinuousClock.now - started >= .seconds(2))
        try await store.close()
    }

    @Test("Releases compare by their numbers; a pre-release counts as its release")
    func releaseOrder() {
        #expect(ReleaseVersion("0.3.0") < ReleaseVersion("0.4.0"))
        #expect(ReleaseVersion("0.9.0") < ReleaseVersion("0.10.0"))
        #expect(ReleaseVersion("0.4.0-dev") == ReleaseVersion("0.4.0"))
        #expect(!(ReleaseVersion("1.0") < ReleaseVersion("1.0.0")))
        #expect(ReleaseVersion("2.0.0") > ReleaseVersion("1.99.99"))
    }

    @Test("Steps are recorded with their kind, time and release", arguments: StoreBackend.allCases)
    func recorded(_ backend: StoreBackend) async throws {
        let store = try await migratedStore(backend)
        let applied = try await store.appliedMigrations()
        #expect(applied.map(\.version) == store.migrationSteps.map(\.version))
        #expect(applied.allSatisfy { $0.kind == .expand && $0.appliedBy == TesseraRelease.version })
        #expect(try await store.schemaVersion() == TesseraRelease.schemaVersion)
        // Again: nothing pending, nothing applied.
        #expect(try await store.migrate(MigrationRequest(now: Self.now)).applied.isEmpty)
        try await store.close()
    }

    @Test("A node registers under the migration lock, heartbeats, and leaves", arguments: StoreBackend.allCases)
    func registry(_ backend: StoreBackend) async throws {
        let store = try await migratedStore(backend)
        let first = node("node-a", release: TesseraRelease.version)
        _ = try await store.migrate(MigrationRequest(node: first, now: Self.now))
        #expect(try await store.nodes() == [first])
        var beat = first
        beat.heartbeatAt = Self.now + 15
        try await store.heartbeat(node: beat)
        try await store.heartbeat(node: node("node-b", release: "0.2.0", heartbeatAt: Self.now - 61))
        #expect(try await store.nodes().map(\.id) == ["node-b", "node-a"])
        #expect(try await store.nodes().first { $0.id == "node-a" }?.heartbeatAt == Self.now + 15)
        // Alive: a heartbeat at most 60 seconds old.
        #expect(try await store.liveNodes(now: Self.now + 15, aliveSeconds: 60).map(\.id) == ["node-a"])
        try await store.removeNode(id: "node-a")
        try await store.removeNode(id: "unknown")
        #expect(try await store.nodes().map(\.id) == ["node-b"])
        try await store.close()
    }

    @Test(
        "serve applies expand steps only; contract steps wait for tessera migrate contract",
        arguments: StoreBackend.allCases)
    func expandOnly(_ backend: StoreBackend) async throws {
        let store = try await migratedStore(backend)
        var expand = MigrationRequest(now: Self.now)
        expand.steps =
            withContract(store, version: 1_000) + [.expand(1_001, "CREATE TABLE expand_probe (id TEXT)")]
        expand.release = "0.4.0"
        #expect(try await store.migrate(expand).applied == [1_001])
        let status = try await MigrationStatus.read(store: store, now: Self.now, aliveSeconds: 60)
        #expect(status.applied.last?.version == 1_001)
        #expect(status.applied.last?.appliedBy == "0.4.0")
        var contract = expand
        contract.kind = .contract
        #expect(try await store.migrate(contract).applied == [1_000])
        let applied = try await store.appliedMigrations()
        #expect(applied.first { $0.version == 1_000 }?.kind == .contract)
        #expect(applied.first { $0.version == 1_000 }?.requiredRelease == "0.4.0")
        try await store.close()
    }

    @Test("contract is refused while a live node runs an older release, naming it", arguments: StoreBackend.allCases)
    func contractRefused(_ backend: StoreBackend) async throws {
        let store = try await migratedStore(backend)
        try await store.heartbeat(node: node("old-node", release: "0.3.0"))
        try await store.heartbeat(node: node("new-node", release: "0.4.0"))
        var contract = MigrationRequest(kind: .contract, now: Self.now, aliveSeconds: 60)
        contract.steps = withContract(store)
        contract.release = "0.4.0"
        let refusal = try await #require(throws: MigrationError.self) { try await store.migrate(contract) }
        #expect(refusal.blockingNodes.map(\.id) == ["old-node"])
        #expect(refusal.description.contains("old-node (release 0.3.0)"))
        #expect(refusal.description.contains("release 0.4.0 or later"))
        #expect(!refusal.description.contains("new-node"))
        // Nothing changed.
        #expect(try await store.appliedMigrations().map(\.version) == store.migrationSteps.map(\.version))
        // A node whose heartbeat is older than the alive window no longer counts.
        #expect(try await store.migrate(contract.with(now: Self.now + 61)).applied == [1_000])
        try await store.close()
    }

    @Test("contract waits for the expand steps before it", arguments: StoreBackend.allCases)
    func contractAfterExpand(_ backend: StoreBackend) async throws {
        let store = try await migratedStore(backend)
        var contract = MigrationRequest(kind: .contract, now: Self.now)
        contract.steps = withContract(store) + [.expand(1_001, "CREATE TABLE expand_probe (id TEXT)")]
        contract.release = "0.4.0"
        let refusal = try await #require(throws: MigrationError.self) { try await store.migrate(contract) }
        #expect(refusal.description.contains("Expand steps 1001 are not applied yet"))
        try await store.close()
    }

    @Test(
        "A node refuses to start on a database contracted for a newer release, and registers nothing",
        arguments: StoreBackend.allCases)
    func olderNodeRefused(_ backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        let store = environment.store
        var contract = MigrationRequest(kind: .contract, now: Self.now)
        contract.steps = withContract(store)
        contract.release = "0.4.0"
        #expect(try await store.migrate(contract).applied == [1_000])
        let refusal = try await #require(throws: MigrationError.self) { try await store.migrate() }
        #expect(refusal.isContractedForNewerRelease)
        #expect(
            refusal.description
                == "The database's schema was contracted for release 0.4.0 (step 1000); this node is release \(TesseraRelease.version) and cannot run on it: upgrade it to 0.4.0 or later."
        )
        // The node (buildApplication, as tessera serve) refuses before it serves, and is not registered.
        let nodesBefore = try await store.nodes()
        await #expect(throws: MigrationError.self) {
            _ = try await buildApplication(configuration: environment.configuration, store: store)
        }
        #expect(try await store.nodes() == nodesBefore)
        try await store.close()
    }

    @Test(
        "A table an older release made (no kinds) is widened; its steps count as expand steps",
        arguments: StoreBackend.allCases)
    func olderTable(_ backend: StoreBackend) async throws {
        let store = try await migratedStore(backend)
        let latest = TesseraRelease.schemaVersion
        // The database as the release before the registry left it: the registry's step and every
        // later one undone (their ledger rows, and what they made).
        let registry = try #require(SQLiteMigrations.all.first { $0.sql.contains("CREATE TABLE nodes") }).version
        // What each step after the registry's made, undone (a new step adds its line here).
        let later: [Int64: [String]] = [
            registry + 1: ["DROP TABLE profile_activity", "DROP TABLE daily_tallies"],
            16: ["client_address", "user_agent"].map { "ALTER TABLE sessions DROP COLUMN \($0)" },
            17: ["ALTER TABLE events DROP COLUMN trace_context"]
                + (backend == .postgres ? ["ALTER TABLE event_outbox DROP COLUMN trace_context"] : []),
            // (Its trigger goes with profile_activity, above.)
            18: [
                "DROP TABLE activity_installations", "DROP TABLE activity_latest", "DROP TABLE activity_counts",
                "DROP TABLE activity_backfill",
            ]
                + (backend == .postgres
                    ? [
                        "DROP FUNCTION profile_activity_counts()", "DROP FUNCTION activity_latest_move",
                        "DROP FUNCTION activity_count_add",
                    ] : []),
            // (Its columns of activity_backfill go with the table, above.)
            19: ["DROP INDEX events_audit_profile"],
        ]
        #expect(
            Set(later.keys) == Set(SQLiteMigrations.all.map(\.version).filter { $0 > registry }),
            "a new step after the registry's: undo what it makes here too")
        #expect(latest == later.keys.max())
        for sql in [
            "DELETE FROM schema_migrations WHERE version >= \(registry)", "DROP TABLE nodes",
            "ALTER TABLE schema_migrations DROP COLUMN kind",
            "ALTER TABLE schema_migrations DROP COLUMN required_release",
            "ALTER TABLE schema_migrations DROP COLUMN applied_by",
        ] + later.sorted(by: { $0.key < $1.key }).flatMap(\.value) {
            try await HealthTests.run(sql, on: store)
        }
        let before = try await store.appliedMigrations()
        #expect(before.map(\.version) == Array(1..<registry))
        #expect(before.allSatisfy { $0.kind == .expand && $0.appliedBy == nil })
        #expect(try await store.nodes().isEmpty)
        #expect(
            try await store.migrate(MigrationRequest(now: Self.now)).applied
                == SQLiteMigrations.all.map(\.version).filter { $0 >= registry })
        let after = try await store.appliedMigrations()
        #expect(after.last?.appliedBy == TesseraRelease.version)
        #expect(after.first?.appliedBy == nil)
        // The older release still records its steps the way it did, as expand steps.
        try await HealthTests.run("INSERT INTO schema_migrations (version, applied_at) VALUES (500, 1)", on: store)
        #expect(
            try await store.appliedMigrations().last
                == AppliedMigration(
                    version: 500, kind: .expand, requiredRelease: nil, appliedAt: 1, appliedBy: nil))
        try await store.close()
    }

    @Test("A running node heartbeats off the request path and leaves the registry on a graceful shutdown")
    func runningNode() async throws {
        let environment = try await TestEnvironment.make(backend: .sqlite) {
            $0.nodeHeartbeatInterval = .milliseconds(5)
            $0.drainDelay = .zero
        }
        let sqlite = try #require(environment.store as? SQLiteStore)
        let started = environment.clock.seconds
        let node = try await makeNode(configuration: environment.configuration, store: environment.store)
        let registered = try #require(try await sqlite.nodes().first)
        #expect(registered.release == TesseraRelease.version)
        #expect(registered.schemaVersion == TesseraRelease.schemaVersion)
        #expect(registered.startedAt == started && registered.heartbeatAt == started)
        let group = ServiceGroup(configuration: .init(services: [node], logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        // The clock moves on: the next heartbeat writes the new time.
        environment.clock.advance(seconds: 15)
        let deadline = ContinuousClock.now + .seconds(60)
        while try await sqlite.nodes().first?.heartbeatAt != started + 15, ContinuousClock.now < deadline {
            await Task.yield()
        }
        #expect(try await sqlite.nodes().map(\.heartbeatAt) == [started + 15])
        #expect(try await sqlite.nodes().first?.startedAt == started)
        await group.triggerGracefulShutdown()
        try await running.value
        // The store is closed with the node: read the file again.
        let reopened = try SQLiteStore(path: sqlite.path, masterKeys: TestMasterKeys.keyring)
        #expect(try await reopened.nodes().isEmpty)
        try await reopened.close()
    }

    @Test("SQLite: a migration copies a database that has steps beside itself first, mode 0600")
    func sqliteBackup() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-backup-\(UUID())").path
        let path = directory + "/t.sqlite"
        let store = try SQLiteStore(path: path, masterKeys: TestMasterKeys.keyring)
        let latest = TesseraRelease.schemaVersion
        var previous = MigrationRequest(now: Self.now)
        previous.steps = Array(store.migrationSteps.dropLast())
        // A new database: nothing to copy.
        #expect(try await store.migrate(previous).backupPath == nil)
        let report = try await store.migrate(MigrationRequest(now: Self.now))
        #expect(report.applied == [latest])
        let backup = try #require(report.backupPath)
        let before = try #require(previous.steps?.last).version
        #expect(backup == path + ".schema-\(before)-20261118T110640Z.backup")
        let mode = try FileManager.default.attributesOfItem(atPath: backup)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        // The copy is the database before the step.
        let copy = try SQLiteStore(path: backup, masterKeys: TestMasterKeys.keyring)
        #expect(try await copy.appliedMigrations().map(\.version).max() == before)
        try await copy.close()
        // Nothing pending: no copy.
        #expect(try await store.migrate(MigrationRequest(now: Self.now)) == MigrationReport())
        try await store.close()
    }

    @Test(
        "tessera migrate status, expand and contract; serve refuses a database contracted for a newer release",
        .enabled(if: TesseraExecutable.path != nil))
    func commands() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-migrate-\(UUID())").path
        let (database, keyFile) = (directory + "/t.sqlite", directory + "/master.key")
        let store = try SQLiteStore(path: database, masterKeys: TestMasterKeys.keyring)
        var previous = MigrationRequest(now: Int64(Date().timeIntervalSince1970))
        previous.steps = Array(store.migrationSteps.dropLast())
        _ = try await store.migrate(previous)
        try await store.close()
        try TestMasterKeys.keyring.current.write(toNewFile: keyFile)
        let options = ["--database", "sqlite:\(database)", "--master-key-file", keyFile]
        let latest = TesseraRelease.schemaVersion

        let status = try await TesseraExecutable.run(["migrate", "status"] + options)
        #expect(status.status == 0, "\(status.errors)")
        #expect(status.output.contains("Pending expand steps: \(latest)."))
        #expect(status.output.contains("Pending contract steps: none."))
        #expect(status.output.contains("  1  expand  "))

        let expand = try await TesseraExecutable.run(["migrate", "expand"] + options)
        #expect(expand.status == 0, "\(expand.errors)")
        #expect(expand.output.contains("Applied expand steps \(latest)."))
        let before = try #require(previous.steps?.last).version
        #expect(expand.output.contains("Copied the database to \(database).schema-\(before)-"))
        let again = try await TesseraExecutable.run(["migrate", "expand"] + options)
        #expect(again.output == "No pending expand step.\n")
        let contract = try await TesseraExecutable.run(["migrate", "contract"] + options)
        #expect(contract.status == 0, "\(contract.errors)")
        #expect(contract.output == "No pending contract step.\n")

        // A newer release contracted the schema, with a node of its own alive (and a dead one).
        let newer = try SQLiteStore(path: database, masterKeys: TestMasterKeys.keyring)
        let now = Int64(Date().timeIntervalSince1970)
        try await newer.heartbeat(node: node("new-node", release: "0.9.0", heartbeatAt: now))
        try await newer.heartbeat(node: node("dead-node", release: "0.2.0", heartbeatAt: now - 600))
        var contracted = MigrationRequest(kind: .contract, now: Int64(Date().timeIntervalSince1970))
        contracted.steps = withContract(newer, version: 2_000)
        contracted.release = "0.9.0"
        #expect(try await newer.migrate(contracted).applied == [2_000])
        try await newer.close()
        let listed = try await TesseraExecutable.run(["migrate", "status"] + options)
        #expect(listed.output.contains("  2000  contract  "))
        #expect(listed.output.contains("requires release 0.4.0"))
        #expect(listed.output.contains("  new-node  release 0.9.0  "))
        #expect(!listed.output.contains("dead-node"))
        let serve = try await TesseraExecutable.run(["serve", "--port", "0"] + options)
        #expect(serve.status != 0)
        #expect(serve.errors.contains("The database's schema was contracted for release 0.4.0 (step 2000)"))
        #expect(serve.errors.contains("upgrade it to 0.4.0 or later"))
    }
}

extension MigrationRequest {
    fileprivate func with(now: Int64) -> MigrationRequest {
        var copy = self
        copy.now = now
        return copy
    }
}
