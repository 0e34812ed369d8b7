import Foundation
import PostgresNIO
import Synchronization
import TesseraTokens
import Testing

@testable import TesseraServer

@Suite("Secrets at rest")
struct SecretsAtRestTests {
    @Test("A copy of the database holds no identity secret and no signing key, in any encoding")
    func nothingInTheClear() async throws {
        let environment = try await TestEnvironment.make { $0.projectCacheSeconds = 0 }
        let store = environment.store
        // The app's service group closes the store when the app stops: everything happens inside.
        try await environment.withApp { client in
            let created = try await client.admin(.post, "/v1/admin/identity-secrets")
            #expect(created.status == .created)
            let identified = try await client.identify(sub: "user-1")
            #expect(identified.status == .ok)
            let beat = try await client.send(.post, "/v1/sessions/authenticate", bearer: identified.sessionToken)
            #expect(beat.status == .ok)
            let projectID = environment.project.project.id
            let rotated = SessionSigningKey.generate()
            try await store.rotateSessionKey(
                projectID: projectID,
                newKey: SessionKeyRecord(
                    kid: rotated.kid, privateKey: rotated.privateKeyRawRepresentation,
                    createdAt: environment.clock.seconds),
                now: environment.clock.seconds)
            let other = try await environment.makeOtherProject()
            var needles = SecretNeedles()
            var secretCount = 0
            var keyCount = 0
            for project in [environment.project, other] {
                needles.add(text: project.secretKey, label: "secret key")
                // The publishable key is public by design: the Keys page shows it (api_key_hints keeps it
                // whole), while the secret key's hint is its last four characters only.
                #expect(
                    try await store.apiKeyHints(projectID: project.project.id).values.sorted()
                        == [
                            project.publishableKey, "sk_…" + project.secretKey.suffix(4),
                        ].sorted())
                for secret in try await store.identitySecrets(projectID: project.project.id) {
                    needles.add(text: secret.value, label: "identity secret \(secret.kid)")
                    secretCount += 1
                }
                for key in try await store.sessionKeys(projectID: project.project.id) {
                    needles.add(privateKey: key.privateKey, label: "signing key \(key.kid)")
                    keyCount += 1
                }
            }
            #expect(secretCount == 3 && keyCount == 3)
            #expect(needles.found(in: Array(environment.project.identitySecret.value.utf8)).count >= 2)
            let copy = try await DatabaseDump.everything(store)
            #expect(needles.found(in: copy) == [])
            #expect(Data(copy).range(of: Data("tsv1.\(store.masterKeys.current.id).".utf8)) != nil)
        }
    }

    @Test("A database sealed under another master key is refused at startup with master_key_mismatch")
    func wrongMasterKey() async throws {
        let database = try SharedDatabase.make()
        let right = MasterKeyring(current: .generate())
        let wrong = MasterKeyring(current: .generate())
        let seeding = try database.store(right)
        try await seeding.migrate()
        let project = try await ProjectProvisioner.create(name: "Sealed", store: seeding)
        try await seeding.close()

        let store = try database.store(wrong)
        var configuration = ServerConfiguration()
        configuration.createDevelopmentProject = true
        configuration.logLevel = .critical
        configuration.announce = { _ in Issue.record("nothing may be created on a refused database") }
        let error = await #expect(throws: MasterKeyError.self) {
            _ = try await buildApplication(configuration: configuration, store: store)
        }
        #expect(error?.code == "master_key_mismatch")
        #expect(error?.message.contains(right.current.id) == true)
        #expect(error?.message.contains(wrong.current.id) == true)
        #expect(error?.message.contains(right.current.encoded) == false)
        try await store.close()

        let again = try database.store(right)
        #expect(
            try await again.identitySecrets(projectID: project.project.id).map(\.value) == [
                project.identitySecret.value
            ])
        #expect(try await again.projectCount() == 1)
        try await again.close()
    }

    @Test("A value moved to another row no longer opens")
    func swappedRows() async throws {
        let environment = try await TestEnvironment.make()
        let other = try await environment.makeOtherProject()
        let cells = try await environment.store.sealedCells().filter { $0.kind == .identitySecret }
        let mine = try #require(cells.first { $0.projectID == environment.project.project.id })
        let theirs = try #require(cells.first { $0.projectID == other.project.id })
        #expect(try await environment.store.replaceSealedCell(mine, with: theirs.stored))
        let error = await #expect(throws: MasterKeyError.self) {
            _ = try await SecretResealer.sealPlaintextAndVerify(store: environment.store)
        }
        #expect(error?.code == "master_key_mismatch")
        await #expect(throws: MasterKeyError.self) {
            _ = try await environment.store.identitySecrets(projectID: environment.project.project.id)
        }
    }

    @Test("A node that meets a value sealed under a key it lacks answers 503, not 500")
    func unknownKeyAtRuntime() async throws {
        let environment = try await TestEnvironment.make { $0.projectCacheSeconds = 0 }
        try await environment.withApp { client in
            let cell = try #require(
                try await environment.store.sealedCells().first {
                    $0.kind == .identitySecret && $0.projectID == environment.project.project.id
                })
            let elsewhere = MasterKeyring(current: .generate())
            let foreign = elsewhere.seal(Array(environment.project.identitySecret.value.utf8), binding: cell.binding)
            #expect(try await environment.store.replaceSealedCell(cell, with: foreign))
            let reply = try await client.identify(sub: "someone")
            #expect(reply.status == .serviceUnavailable)
            #expect(reply.errorCode == "service_unavailable")
        }
    }

    @Test("The plaintext secrets of an older database are sealed on first start and keep working")
    func legacyPlaintextSealed() async throws {
        let database = try SharedDatabase.make()
        let keys = MasterKeyring(current: .generate())
        let store = try database.store(keys)
        try await store.migrate()
        let legacy = try await LegacyProject.write(into: store)
        await #expect(throws: MasterKeyError.self) { _ = try await store.identitySecrets(projectID: legacy.id) }

        let clock = TestClock(Date())
        var configuration = ServerConfiguration()
        configuration.createDevelopmentProject = false
        configuration.logLevel = .critical
        configuration.now = { clock.now }
        configuration.publicURL = "https://tessera.test"
        let provisioned = ProvisionedProject(
            project: try #require(try await store.project(id: legacy.id)), publishableKey: legacy.publishableKey,
            secretKey: legacy.secretKey, identitySecret: legacy.identitySecret)
        let environment = TestEnvironment(
            store: store, clock: clock, project: provisioned, configuration: configuration)
        try await environment.withApp { client in
            let identified = try await client.identify(sub: "old-user")
            #expect(identified.status == .ok)
            let jwks = try JSONWebKeySet(
                json: try await client.send(.get, "/v1/projects/\(legacy.id)/jwks.json").body)
            #expect(jwks.keys.map(\.kid) == [legacy.signingKey.kid])
            #expect(jwks.keys.first == legacy.signingKey.publicJWK)
            let cells = try await store.sealedCells()
            #expect(cells.count == 2)
            #expect(cells.allSatisfy { MasterKeyring.keyID(of: $0.stored) == keys.current.id })
            var needles = SecretNeedles()
            needles.add(text: legacy.identitySecret.value, label: "identity secret")
            needles.add(privateKey: legacy.signingKey.privateKeyRawRepresentation, label: "signing key")
            // SQLite: the raw files too, where freed pages and WAL frames could have kept the plaintext.
            #expect(needles.found(in: try await DatabaseDump.everything(store)) == [])
        }
    }
}

/// A project written with plain SQL the way versions before sealing stored it: secrets in the clear.
struct LegacyProject {
    let id = OpaqueToken.identifier(prefix: "prj_")
    let publishableKey = OpaqueToken.publishableKey()
    let secretKey = OpaqueToken.secretKey()
    let identitySecret = IdentitySecret.generate()
    let signingKey = SessionSigningKey.generate()

    static func write(into store: any TesseraStore) async throws -> LegacyProject {
        let project = LegacyProject()
        let now = Int64(Date().timeIntervalSince1970)
        if let sqlite = store as? SQLiteStore {
            try await sqlite.writer.write { connection in
                try connection.run(
                    """
                    INSERT INTO projects (id, name, slug, publishable_key_hash, secret_key_hash, created_at, updated_at)
                    VALUES (?, 'Legacy', 'legacy', ?, ?, ?, ?)
                    """,
                    [
                        .init(project.id), .init(OpaqueToken.sha256(project.publishableKey)),
                        .init(OpaqueToken.sha256(project.secretKey)), .init(now), .init(now),
                    ])
                try connection.run(
                    "INSERT INTO identity_secrets (project_id, kid, secret, created_at) VALUES (?, ?, ?, ?)",
                    [
                        .init(project.id), .init(project.identitySecret.kid), .init(project.identitySecret.value),
                        .init(now),
                    ])
                try connection.run(
                    "INSERT INTO session_keys (project_id, kid, private_key, created_at) VALUES (?, ?, ?, ?)",
                    [
                        .init(project.id), .init(project.signingKey.kid),
                        .init(project.signingKey.privateKeyRawRepresentation), .init(now),
                    ])
            }
        } else {
            let postgres = try #require(store as? PostgresStore)
            let (id, secret, key) = (project.id, project.identitySecret, project.signingKey)
            let (publishable, secretKey) = (
                OpaqueToken.sha256(project.publishableKey), OpaqueToken.sha256(project.secretKey)
            )
            try await postgres.transaction { connection in
                try await connection.rows(
                    """
                    INSERT INTO projects (id, name, slug, publishable_key_hash, secret_key_hash, created_at, updated_at)
                    VALUES (\(id), 'Legacy', 'legacy', \(publishable.bytea), \(secretKey.bytea), \(now), \(now))
                    """, logger: postgres.logger)
                try await connection.rows(
                    """
                    INSERT INTO identity_secrets (project_id, kid, secret, created_at)
                    VALUES (\(id), \(secret.kid), \(secret.value), \(now))
                    """, logger: postgres.logger)
                try await connection.rows(
                    """
                    INSERT INTO session_keys (project_id, kid, private_key, created_at)
                    VALUES (\(id), \(key.kid), \(key.privateKeyRawRepresentation.bytea), \(now))
                    """, logger: postgres.logger)
            }
        }
        return project
    }
}
