import Foundation
import Synchronization
import TesseraTokens
import Testing

@testable import TesseraServer

/// What the load of a test reports while it runs.
private final class LoadProgress: Sendable {
    let done = Atomic<Bool>(false)
    let completed = Atomic<Int>(0)
    let failures = Mutex<[String]>([])
}

@Suite("tessera keys rewrap")
struct MasterKeyRewrapTests {
    /// A database with `count` projects sealed under `old`.
    private func seeded(_ database: SharedDatabase, old: MasterKey, count: Int, clock: TestClock) async throws
        -> [ProvisionedProject]
    {
        let store = try database.store(MasterKeyring(current: old))
        try await store.migrate()
        var projects: [ProvisionedProject] = []
        for index in 0..<count {
            projects.append(
                try await ProjectProvisioner.create(name: "Project \(index)", store: store, now: clock.now))
        }
        try await store.close()
        return projects
    }

    private func configuration(clock: TestClock) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.now = { clock.now }
        configuration.createDevelopmentProject = false
        configuration.logLevel = .critical
        configuration.publicURL = "https://tessera.test"
        // Every request reads the project's secrets again, so each one meets the rewrap's progress.
        configuration.projectCacheSeconds = 0
        return configuration
    }

    @Test("Identify and heartbeats keep succeeding while every value moves to the new key; then the old key can go")
    func rewrapUnderLoad() async throws {
        let database = try SharedDatabase.make()
        let (old, new) = (MasterKey.generate(), MasterKey.generate())
        let clock = TestClock(Date())
        let projects = try await seeded(database, old: old, count: 12, clock: clock)
        // Step 1 of the procedure: the server holds the new key, and the old one as previous.
        let server = try database.store(MasterKeyring(current: new, previous: [old]))
        let environment = TestEnvironment(
            store: server, clock: clock, project: projects[0], configuration: configuration(clock: clock))
        let load = LoadProgress()
        try await environment.withApp { client in
            let session = try await client.identify(sub: "heartbeat")
            let token = try #require(session.sessionToken)
            // Step 2: the rewrap, from a process of its own (here a store of its own).
            let rewrapper = try database.store(MasterKeyring(current: new, previous: [old]))
            let report = try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        while !load.done.load(ordering: .acquiring) {
                            let identify = try await client.identify(
                                token: environment.identityToken(sub: "user-\(worker)"))
                            let beat = try await client.send(.post, "/v1/sessions/authenticate", bearer: token)
                            if identify.status != .ok || beat.status != .ok {
                                load.failures.withLock { $0.append("\(identify.status.code)/\(beat.status.code)") }
                            }
                            load.completed.add(1, ordering: .relaxed)
                        }
                    }
                }
                // After each value, let the load go on: every intermediate state is served.
                let report = try await SecretResealer.rewrap(store: rewrapper) { _ in
                    let target = load.completed.load(ordering: .relaxed) + 2
                    while load.completed.load(ordering: .relaxed) < target { await Task.yield() }
                }
                load.done.store(true, ordering: .releasing)
                try await group.waitForAll()
                return report
            }
            try await rewrapper.close()
            #expect(report == SecretResealer.Report(sealedPlaintext: 0, rewrapped: 24, unchanged: 0))
        }
        #expect(load.failures.withLock { $0 } == [])
        #expect(load.completed.load(ordering: .relaxed) >= 48)

        // A server that was never given the new key can no longer open the secrets…
        let stale = try database.store(MasterKeyring(current: old))
        await #expect(throws: MasterKeyError.self) {
            _ = try await stale.identitySecrets(projectID: projects[1].project.id)
        }
        try await stale.close()
        // …and one with the new key alone starts and serves.
        let restarted = try database.store(MasterKeyring(current: new))
        let after = TestEnvironment(
            store: restarted, clock: clock, project: projects[5], configuration: configuration(clock: clock))
        try await after.withApp { client in
            let identified = try await client.identify(token: after.identityToken(sub: "after"))
            #expect(identified.status == .ok)
            let beat = try await client.send(.post, "/v1/sessions/authenticate", bearer: identified.sessionToken)
            #expect(beat.status == .ok)
        }
    }

    @Test("An interrupted rewrap leaves every value openable by the old or the new key, and a second run finishes")
    func interruptedRewrap() async throws {
        struct Killed: Error {}
        let database = try SharedDatabase.make()
        let (old, new) = (MasterKey.generate(), MasterKey.generate())
        let projects = try await seeded(database, old: old, count: 4, clock: TestClock(Date()))
        let both = MasterKeyring(current: new, previous: [old])
        let rewrapper = try database.store(both)
        let replaced = LoadProgress()
        await #expect(throws: Killed.self) {
            _ = try await SecretResealer.rewrap(store: rewrapper) { _ in
                if replaced.completed.add(1, ordering: .relaxed).newValue == 3 { throw Killed() }
            }
        }
        let keyIDs = try await rewrapper.sealedCells().map { MasterKeyring.keyID(of: $0.stored) }
        #expect(keyIDs.filter { $0 == new.id }.count == 3)
        #expect(keyIDs.filter { $0 == old.id }.count == 5)
        // Both keys together open everything, as a running server holding both does.
        #expect(try await SecretResealer.sealPlaintextAndVerify(store: rewrapper).unchanged == 8)
        for project in projects {
            #expect(
                try await rewrapper.identitySecrets(projectID: project.project.id).map(\.value)
                    == [project.identitySecret.value])
        }
        let report = try await SecretResealer.rewrap(store: rewrapper)
        #expect(report == SecretResealer.Report(sealedPlaintext: 0, rewrapped: 5, unchanged: 3))
        try await rewrapper.close()
        let onlyNew = try database.store(MasterKeyring(current: new))
        #expect(try await SecretResealer.sealPlaintextAndVerify(store: onlyNew).unchanged == 8)
        try await onlyNew.close()
    }

    @Test("A rewrap refuses, changing nothing, when a value is sealed under a key it was not given")
    func rewrapWithoutTheOldKey() async throws {
        let database = try SharedDatabase.make()
        let (old, new) = (MasterKey.generate(), MasterKey.generate())
        _ = try await seeded(database, old: old, count: 1, clock: TestClock(Date()))
        let rewrapper = try database.store(MasterKeyring(current: new))
        let error = await #expect(throws: MasterKeyError.self) { _ = try await SecretResealer.rewrap(store: rewrapper) }
        #expect(error?.code == "master_key_mismatch")
        #expect(try await rewrapper.sealedCells().allSatisfy { MasterKeyring.keyID(of: $0.stored) == old.id })
        try await rewrapper.close()
    }
}
