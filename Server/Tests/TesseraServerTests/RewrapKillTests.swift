import Foundation
import TesseraTestProcess
import Testing

@testable import TesseraServer

/// The `tessera` executable built beside the tests, when there is one.
enum TesseraExecutable {
    static var path: String? {
        let candidate = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("tessera").path
        return FileManager.default.isExecutableFile(atPath: candidate) ? candidate : nil
    }

    /// Runs `tessera` with `arguments` to its end, with an empty environment but `PATH` and
    /// `environment`; its exit status, standard output and standard error.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> (
        status: Int32, output: String, errors: String
    ) {
        let ran = try await ChildProcess.run(
            try #require(path), arguments,
            environment: environment.merging(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]) {
                $1
            })
        return (ran.termination.status, ran.output, ran.errors)
    }
}

@Suite("tessera keys rewrap, killed")
struct RewrapKillTests {
    @Test(
        "SIGKILL in the middle of a rewrap leaves every value openable by the old or the new key; a second run finishes",
        .enabled(if: TesseraExecutable.path != nil))
    func killedRewrap() async throws {
        let directory = try newTemporaryDirectory("kill")
        let (oldFile, newFile, database) = (directory + "/old.key", directory + "/new.key", directory + "/t.sqlite")
        let (old, new) = (MasterKey.generate(), MasterKey.generate())
        try old.write(toNewFile: oldFile)
        try new.write(toNewFile: newFile)
        let seeding = try SQLiteStore(path: database, masterKeys: MasterKeyring(current: old))
        try await seeding.migrate()
        for index in 0..<250 {
            _ = try await ProjectProvisioner.create(name: "Project \(index)", store: seeding)
        }
        try await seeding.close()

        let process = try ChildProcess(
            executable: try #require(TesseraExecutable.path),
            arguments: [
                "keys", "rewrap", "--verbose", "--database", "sqlite:\(database)", "--master-key-file", oldFile,
                "--new-master-key-file", newFile,
            ], output: .null, errors: .pipe)
        let progress = try #require(process.standardError)
        // Kill it once it reports ten committed values (read on a thread of its own, as it blocks).
        let ended = try await ChildProcess.onThread {
            var lines = 0
            while lines < 10 {
                let data = progress.availableData
                if data.isEmpty { return true }
                lines += data.filter { $0 == UInt8(ascii: "\n") }.count
            }
            return false
        }
        #expect(!ended, "the rewrap ended before it was killed")
        process.send(signal: SIGKILL)
        #expect(await process.terminated() == .signalled(SIGKILL))

        let both = try SQLiteStore(path: database, masterKeys: MasterKeyring(current: new, previous: [old]))
        let keyIDs = try await both.sealedCells().map { MasterKeyring.keyID(of: $0.stored) }
        #expect(keyIDs.count == 500)
        #expect(keyIDs.filter { $0 == new.id }.count >= 10)
        #expect(keyIDs.filter { $0 == old.id }.count > 0)
        #expect(keyIDs.allSatisfy { $0 == new.id || $0 == old.id })
        // Every value opens (none is half-written), and servers holding both keys start.
        #expect(try await SecretResealer.sealPlaintextAndVerify(store: both).unchanged == 500)
        try await both.close()

        let again = try await TesseraExecutable.run([
            "keys", "rewrap", "--database", "sqlite:\(database)", "--master-key-file", oldFile,
            "--new-master-key-file", newFile,
        ])
        #expect(again.status == 0, "\(again.errors)")
        let onlyNew = try SQLiteStore(path: database, masterKeys: MasterKeyring(current: new))
        #expect(try await SecretResealer.sealPlaintextAndVerify(store: onlyNew).unchanged == 500)
        try await onlyNew.close()

        // A server given the wrong key refuses clearly, with a non-zero exit.
        let refused = try await TesseraExecutable.run([
            "serve", "--database", "sqlite:\(database)", "--master-key-file", oldFile, "--port", "0",
        ])
        #expect(refused.status != 0)
        #expect(refused.errors.contains("master_key_mismatch"))
    }
}
