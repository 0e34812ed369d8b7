import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

@Suite("Master keys and sealing")
struct MasterKeyTests {
    @Test("A sealed value names its key, hides the plaintext and opens only for its own row")
    func sealAndOpen() throws {
        let keys = MasterKeyring(current: .generate())
        let binding = SecretBinding.identitySecret(projectID: "prj_a", kid: "ik_1")
        let plaintext = Array("tis_the-secret-value-of-the-project".utf8)
        let sealed = keys.seal(plaintext, binding: binding)
        #expect(String(decoding: sealed, as: UTF8.self).hasPrefix("tsv1.\(keys.current.id)."))
        #expect(Data(sealed).range(of: Data(plaintext)) == nil)
        #expect(keys.seal(plaintext, binding: binding) != sealed)
        #expect(try keys.open(sealed, binding: binding) == plaintext)
        for other in [
            SecretBinding.identitySecret(projectID: "prj_b", kid: "ik_1"),
            SecretBinding.identitySecret(projectID: "prj_a", kid: "ik_2"),
            SecretBinding.sessionKey(projectID: "prj_a", kid: "ik_1"),
        ] {
            #expect(throws: MasterKeyError.self) { try keys.open(sealed, binding: other) }
        }
        var tampered = sealed
        tampered[tampered.count - 3] =
            tampered[tampered.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: MasterKeyError.self) { try keys.open(tampered, binding: binding) }
        let unsealed = #expect(throws: MasterKeyError.self) { try keys.open(plaintext, binding: binding) }
        #expect(unsealed?.code == "unsealed_value")
    }

    @Test("Previous keys open; a missing key is a master_key_mismatch naming key IDs only")
    func previousKeys() throws {
        let (old, new) = (MasterKey.generate(), MasterKey.generate())
        let binding = SecretBinding.sessionKey(projectID: "prj_a", kid: "sk_1")
        let sealedOld = MasterKeyring(current: old).seal([1, 2, 3], binding: binding)
        #expect(try MasterKeyring(current: new, previous: [old]).open(sealedOld, binding: binding) == [1, 2, 3])
        let error = #expect(throws: MasterKeyError.self) {
            try MasterKeyring(current: new).open(sealedOld, binding: binding)
        }
        #expect(error?.code == "master_key_mismatch")
        #expect(error?.message.contains(old.id) == true)
        #expect(error?.message.contains(old.encoded) == false)
        #expect(MasterKeyring.keyID(of: sealedOld) == old.id)
        #expect(MasterKeyring.keyID(of: [UInt8](repeating: 7, count: 32)) == nil)
    }

    @Test("A key file holds 32 bytes in base64url or raw; anything else is refused")
    func keyFiles() throws {
        let key = MasterKey.generate()
        let raw = key.key.withUnsafeBytes { Array($0) }
        #expect(try MasterKey(fileContents: Array((key.encoded + "\n").utf8)).id == key.id)
        #expect(try MasterKey(fileContents: raw).id == key.id)
        #expect(try MasterKey(fileContents: Array(Data(raw).base64EncodedString().utf8)).id == key.id)
        #expect(key.id.count == 16 && key.id.allSatisfy(\.isHexDigit))
        #expect(!key.encoded.contains(key.id))
        for bad in [
            [], Array("short".utf8), [UInt8](repeating: 1, count: 31), Array(Base64URL.encode(raw.prefix(16)).utf8),
        ] {
            #expect(throws: MasterKeyError.self) { try MasterKey(fileContents: bad) }
        }
    }

    @Test("A new key file is created with mode 0600 and never overwrites one")
    func newKeyFile() throws {
        let path = try newTemporaryDirectory("keys") + "/master.key"
        let key = MasterKey.generate()
        try key.write(toNewFile: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try MasterKey.load(path: path).id == key.id)
        #expect(throws: MasterKeyError.self) { try MasterKey.generate().write(toNewFile: path) }
        #expect(try MasterKey.load(path: path).id == key.id)
        #expect(!MasterKey.isExposed(path: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        #expect(MasterKey.isExposed(path: path))
    }

    @Test("With SQLite and no key configured, master.key is created beside the database on first start and used after")
    func defaultKeyFile() async throws {
        let directory = try newTemporaryDirectory("keys")
        var configuration = ServerConfiguration()
        configuration.database = .sqlite(path: directory + "/data/tessera.sqlite")
        let keyPath = directory + "/data/master.key"
        let first = try await configuration.openStore(logger: .init(label: "test"))
        #expect(FileManager.default.fileExists(atPath: keyPath))
        let attributes = try FileManager.default.attributesOfItem(atPath: keyPath)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(first.masterKeys.current.id == (try MasterKey.load(path: keyPath)).id)
        let project = try await ProjectProvisioner.create(name: "Kept", store: first)
        try await first.close()

        let second = try await configuration.openStore(logger: .init(label: "test"))
        #expect(
            try await second.identitySecrets(projectID: project.project.id).map(\.value) == [
                project.identitySecret.value
            ])
        try await second.close()

        // The wrong key file: a clear refusal, the database untouched.
        try FileManager.default.removeItem(atPath: keyPath)
        try MasterKey.generate().write(toNewFile: directory + "/other.key")
        var wrong = configuration
        wrong.masterKeyFile = directory + "/other.key"
        let mismatch = await #expect(throws: MasterKeyError.self) {
            _ = try await wrong.openStore(logger: .init(label: "test"))
        }
        #expect(mismatch?.code == "master_key_mismatch")
        // No key file at all for a sealed database: refused, and no new key is made up.
        let missing = await #expect(throws: MasterKeyError.self) {
            _ = try await configuration.openStore(logger: .init(label: "test"))
        }
        #expect(missing?.code == "master_key_missing")
        #expect(!FileManager.default.fileExists(atPath: keyPath))
    }

    @Test("Processes starting at once on a new SQLite database end up with one master key")
    func concurrentFirstStarts() async throws {
        var shared = ServerConfiguration()
        shared.database = .sqlite(path: try newTemporaryDirectory("keys") + "/tessera.sqlite")
        let configuration = shared
        let stores = try await withThrowingTaskGroup(of: (any TesseraStore).self) { group in
            for _ in 0..<4 { group.addTask { try await configuration.openStore(logger: .init(label: "test")) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(stores.map(\.masterKeys.current.id)).count == 1)
        for store in stores { try await store.close() }
    }

    @Test("A key file appears whole: a process reading it while another writes it never sees a part")
    func keyFileAppearsWhole() async throws {
        // Two processes starting at once on a new SQLite database: one writes master.key, the other
        // finds the file and reads it. Written in place, the reader could read it empty (a flaky
        // `invalid_master_key` in concurrentFirstStarts under load).
        let directory = try newTemporaryDirectory("keys")
        for round in 0..<200 {
            let path = directory + "/master-\(round).key"
            let key = MasterKey.generate()
            let reader = Task.detached { () -> MasterKeyError? in
                while !FileManager.default.fileExists(atPath: path) {}
                do throws(MasterKeyError) {
                    _ = try MasterKey.load(path: path)
                    return nil
                } catch {
                    return error
                }
            }
            try key.write(toNewFile: path)
            let failure = await reader.value
            #expect(failure == nil, "round \(round): \(failure.map { "\($0)" } ?? "")")
            if failure != nil { break }
            #expect(try MasterKey.load(path: path).id == key.id)
        }
        // Nothing else is left beside the key files.
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(names.allSatisfy { $0.hasPrefix("master-") && $0.hasSuffix(".key") })
    }

    @Test("A key file is never replaced: the second writer of one path fails and the first key stays")
    func keyFileIsNeverReplaced() throws {
        let path = try newTemporaryDirectory("keys") + "/master.key"
        let first = MasterKey.generate()
        try first.write(toNewFile: path)
        #expect(throws: MasterKeyError.self) { try MasterKey.generate().write(toNewFile: path) }
        #expect(try MasterKey.load(path: path).id == first.id)
        #expect(!MasterKey.isExposed(path: path))
    }

    @Test("PostgreSQL without a master key file is refused before connecting")
    func postgresNeedsAKey() async throws {
        var configuration = ServerConfiguration()
        configuration.database = .postgres(url: "postgres://tessera@127.0.0.1:1/tessera")
        let error = await #expect(throws: MasterKeyError.self) {
            _ = try await configuration.openStore(logger: .init(label: "test"))
        }
        #expect(error?.code == "master_key_missing")
        #expect(error?.message.contains("--master-key-file") == true)
    }
}
