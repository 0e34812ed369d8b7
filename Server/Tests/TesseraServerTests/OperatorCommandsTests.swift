import Foundation
import TesseraTestProcess
import TesseraTokens
import Testing

@testable import TesseraServer

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Operator commands: projects list, config check, backup")
struct OperatorCommandsTests {
    @Test("Every project is listed, oldest first", arguments: StoreBackend.allCases)
    func allProjects(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        environment.clock.advance(seconds: 10)
        let other = try await environment.makeOtherProject()
        let projects = try await environment.store.allProjects()
        #expect(projects.map(\.id) == [environment.project.project.id, other.project.id])
        #expect(projects.last?.slug == other.project.slug)
    }

    @Test("config check prints the effective configuration without a password or a key")
    func configurationReport() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-config-\(UUID())").path
        let key = MasterKey.generate()
        try key.write(toNewFile: directory + "/master.key")
        let configuration = try ServerConfiguration.fromEnvironment([
            "TESSERA_DATABASE_URL": "postgres://tessera:pa55-w0rd@db.internal:5432/tessera?sslmode=require",
            "TESSERA_MASTER_KEY_FILE": directory + "/master.key",
            "TESSERA_PORT": "9000",
        ])
        let report = try configuration.report()
        #expect(report.contains("database: postgres://tessera:***@db.internal:5432/tessera?sslmode=require"))
        #expect(report.contains("master_key_file: \(directory)/master.key (key \(key.id))"))
        #expect(report.contains("port: 9000"))
        let old = MasterKey.generate()
        try old.write(toNewFile: directory + "/old.key")
        var withPrevious = configuration
        withPrevious.previousMasterKeyFiles =
            try ServerConfiguration.fromEnvironment(["TESSERA_PREVIOUS_MASTER_KEY_FILES": directory + "/old.key"])
            .previousMasterKeyFiles
        #expect(try withPrevious.report().contains("previous_master_key_file: \(directory)/old.key (key \(old.id))"))
        #expect(!report.contains("pa55-w0rd"))
        #expect(!report.contains(key.encoded))
        #expect(
            DatabaseURL.postgres(url: "postgres://h/db?user=u&password=secret&x=1").redacted
                == "postgres://h/db?user=u&password=***&x=1")

        var invalid = configuration
        invalid.masterKeyFile = directory + "/absent.key"
        #expect(throws: MasterKeyError.self) { try invalid.report() }
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.fromEnvironment(["TESSERA_PORT": "http"]) }
    }

    @Test("An online SQLite backup restores intact, with its data, and holds no secret in the clear")
    func backup() async throws {
        let environment = try await TestEnvironment.make(backend: .sqlite)
        let store = try #require(environment.store as? SQLiteStore)
        try await environment.withApp { client in
            let identified = try await client.identify(sub: "backed-up")
            #expect(identified.status == .ok)
            let path = (store.path as NSString).deletingLastPathComponent + "/backups/copy.sqlite"
            try await store.backup(to: path)
            await #expect(throws: ConfigurationError.self) { try await store.backup(to: path) }

            let check = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 1000, queryOnly: true)
            #expect(try check.query("PRAGMA integrity_check").map { $0.text(0) } == ["ok"])
            check.close()
            let restored = try SQLiteStore(path: path, masterKeys: store.masterKeys)
            #expect(try await restored.allProjects().map(\.id) == [environment.project.project.id])
            #expect(
                try await restored.profiles(projectID: environment.project.project.id, externalID: "backed-up").count
                    == 1)
            #expect(
                try await restored.identitySecrets(projectID: environment.project.project.id).map(\.value)
                    == [environment.project.identitySecret.value])
            var needles = SecretNeedles()
            needles.add(text: environment.project.identitySecret.value, label: "identity secret")
            for key in try await restored.sessionKeys(projectID: environment.project.project.id) {
                needles.add(privateKey: key.privateKey, label: "signing key")
            }
            #expect(needles.found(in: try await DatabaseDump.everything(restored)) == [])
            try await restored.close()
        }
    }
}

@Suite("The tessera command's operator subcommands")
struct OperatorCommandLineTests {
    @Test(
        "projects create|list, config check, backup and keys generate through the real executable",
        .enabled(if: TesseraExecutable.path != nil))
    func commandLine() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-cli-\(UUID())").path
        let database = "sqlite:\(directory)/data/tessera.sqlite"
        // Without --create, no command but serve makes a database (a command run from the wrong directory).
        let stray = try await TesseraExecutable.run(["projects", "create", "--name", "Listed", "--database", database])
        #expect(stray.status != 0)
        #expect(stray.errors.contains("There is no database at \(directory)/data/tessera.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/data"))
        let created = try await TesseraExecutable.run([
            "projects", "create", "--name", "Listed", "--database", database, "--json", "--create",
        ])
        #expect(created.status == 0, "\(created.errors)")
        #expect(FileManager.default.fileExists(atPath: directory + "/data/master.key"))
        // The database is readable by its owner only (SQLite gives its WAL the same mode).
        for file in ["tessera.sqlite"] {
            let mode = try FileManager.default.attributesOfItem(atPath: directory + "/data/" + file)[.posixPermissions]
            #expect((mode as? Int).map { $0 & 0o077 } == 0, "\(file)")
        }
        let createdJSON = try JSONSerialization.jsonObject(with: Data(created.output.utf8)) as? [String: Any]
        let oldSecret = try #require(createdJSON?["secret_key"] as? String)

        // The break-glass for a lost secret key: a new one, printed once, the old one refused.
        let rotated = try await TesseraExecutable.run([
            "projects", "rotate-key", "--project", "listed", "--kind", "secret", "--database", database,
        ])
        #expect(rotated.status == 0, "\(rotated.errors)")
        let newSecret = try #require(rotated.output.split(separator: "\n").last.map(String.init))
        #expect(newSecret.hasPrefix("sk_") && newSecret != oldSecret)
        let opened = try SQLiteStore(
            path: directory + "/data/tessera.sqlite",
            masterKeys: MasterKeyring(current: try MasterKey.load(path: directory + "/data/master.key")))
        #expect(try await opened.project(secretKeyHash: OpaqueToken.sha256(newSecret))?.slug == "listed")
        #expect(try await opened.project(secretKeyHash: OpaqueToken.sha256(oldSecret)) == nil)
        let projectID = try #require(try await opened.allProjects().first?.id)
        #expect(try await opened.apiKeyHints(projectID: projectID).values.contains("sk_…" + newSecret.suffix(4)))
        let audit = try await opened.auditEvents(projectID: projectID, before: nil, limit: 10)
        #expect(audit.contains { $0.type == "api_key.rotated" && $0.actor.id == "command-line" })
        try await opened.close()
        let unknownProject = try await TesseraExecutable.run([
            "projects", "rotate-key", "--project", "nope", "--kind", "secret", "--database", database,
        ])
        #expect(unknownProject.status != 0)

        let listed = try await TesseraExecutable.run(["projects", "list", "--database", database, "--json"])
        #expect(listed.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [String: Any]
        let projects = try #require(json?["projects"] as? [[String: Any]])
        #expect(projects.map { $0["slug"] as? String } == ["listed"])
        #expect(projects.first?["created_at"] is String)
        let table = try await TesseraExecutable.run(["projects", "list", "--database", database])
        #expect(table.output.hasPrefix("ID") && table.output.contains("Listed"))

        let checked = try await TesseraExecutable.run(["config", "check", "--database", database, "--port", "9090"])
        #expect(checked.status == 0)
        #expect(checked.output.contains("master_key_file: \(directory)/data/master.key (key "))
        let key = try MasterKey.load(path: directory + "/data/master.key")
        #expect(!checked.output.contains(key.encoded))
        for invalid in [
            ["config", "check", "--port", "70000"],
            ["config", "check", "--database", "postgres://u:hunter2@db/tessera"],
            ["config", "check", "--database", database, "--master-key-file", directory + "/absent.key"],
        ] {
            let refused = try await TesseraExecutable.run(invalid)
            #expect(refused.status != 0, "\(invalid)")
            #expect(refused.errors.contains("Error:"), "\(invalid)")
            #expect(!refused.errors.contains("hunter2"))
        }

        let backup = try await TesseraExecutable.run([
            "backup", "--database", database, "--to", directory + "/copy.sqlite",
        ])
        #expect(backup.status == 0, "\(backup.errors)")
        #expect(FileManager.default.fileExists(atPath: directory + "/copy.sqlite"))
        let backupMode = try FileManager.default.attributesOfItem(atPath: directory + "/copy.sqlite")[.posixPermissions]
        #expect((backupMode as? Int).map { $0 & 0o077 } == 0)
        let postgres = try await TesseraExecutable.run([
            "backup", "--database", "postgres://u@db/tessera", "--master-key-file", directory + "/data/master.key",
            "--to", directory + "/pg.sqlite",
        ])
        #expect(postgres.status != 0)
        #expect(postgres.errors.contains("pg_dump"))

        let generated = try await TesseraExecutable.run(["keys", "generate", "--to", directory + "/new.key"])
        #expect(generated.status == 0)
        #expect(generated.output.contains(try MasterKey.load(path: directory + "/new.key").id))
        #expect(try await TesseraExecutable.run(["keys", "generate", "--to", directory + "/new.key"]).status != 0)
    }
}

@Suite("tessera serve on a busy port")
struct ServeBusyPortTests {
    @Test(
        "A busy port is refused in one line before any database or key is made",
        .enabled(if: TesseraExecutable.path != nil))
    func busyPort() async throws {
        let listener = try LoopbackSocket.listening()
        defer { close(listener.descriptor) }
        let port = listener.port
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-busy-\(UUID())").path
        let refused = try await TesseraExecutable.run([
            "serve", "--host", "127.0.0.1", "--port", String(port), "--database", "sqlite:\(directory)/t.sqlite",
        ])
        #expect(refused.status != 0)
        #expect(refused.errors.contains("Port \(port) is in use"))
        #expect(!refused.output.contains("sk_"))
        #expect(!FileManager.default.fileExists(atPath: directory))
    }
}

@Suite("tessera token mint")
struct TokenMintCommandTests {
    /// `tessera token mint` with an environment and a standard input of the test's choosing.
    static func mint(_ arguments: [String], environment: [String: String] = [:], input: String = "") async throws -> (
        status: Int32, output: String
    ) {
        let ran = try await ChildProcess.run(
            try #require(TesseraExecutable.path), ["token", "mint"] + arguments,
            environment: environment.merging(["PATH": "/usr/bin:/bin"]) { first, _ in first }, input: input)
        return (ran.termination.status, ran.output)
    }

    @Test(
        "The identity secret comes from TESSERA_IDENTITY_SECRET or standard input, not only the command line",
        .enabled(if: TesseraExecutable.path != nil))
    func secretSources() async throws {
        let secret = IdentitySecret.generate()
        let verifier = { (token: String) -> String? in
            let parts = token.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".")
            return parts.count == 3 ? String(parts[1]) : nil
        }
        let fromEnvironment = try await Self.mint(
            ["--sub", "user-1"], environment: ["TESSERA_IDENTITY_SECRET": secret.value])
        #expect(fromEnvironment.status == 0)
        #expect(verifier(fromEnvironment.output) != nil)
        let fromInput = try await Self.mint(["--sub", "user-1", "--identity-secret-stdin"], input: secret.value + "\n")
        #expect(fromInput.status == 0)
        #expect(verifier(fromInput.output) != nil)
        let none = try await Self.mint(["--sub", "user-1"])
        #expect(none.status != 0)
    }
}
