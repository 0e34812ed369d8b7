import Crypto
import Foundation
import Testing

@testable import Tessera

/// A store whose reads can be made to fail as "locked", counting writes.
final class LockableStore: CredentialStore {
    let inner: any CredentialStore
    let isLocked = Locked(false)
    let saves = Locked(0)

    init(_ inner: any CredentialStore = InMemoryCredentialStore()) { self.inner = inner }

    func load(_ key: String) throws(CredentialStoreError) -> Data? {
        if isLocked.withLock({ $0 }) { throw .unavailable("locked (test)") }
        return try inner.load(key)
    }
    func save(_ data: Data, for key: String) throws(CredentialStoreError) {
        if isLocked.withLock({ $0 }) { throw .unavailable("locked (test)") }
        saves.withLock { $0 += 1 }
        try inner.save(data, for: key)
    }
    func remove(_ key: String) throws(CredentialStoreError) {
        if isLocked.withLock({ $0 }) { throw .unavailable("locked (test)") }
        try inner.remove(key)
    }
}

func temporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-tests-\(UUID().uuidString)")
    return url
}

@Suite("Credential storage")
struct StorageTests {
    @Test("Locked storage publishes storageUnavailable, creates no identity, and is retried")
    func lockedStorage() async throws {
        let store = LockableStore()
        let seeded = Harness(store: store)
        try await seeded.start(quiet: true)
        let installation = try #require(await seeded.client.installationID)
        let savesBefore = store.saves.withLock { $0 }

        store.isLocked.withLock { $0 = true }
        let harness = seeded.relaunch()
        await #expect {
            try await harness.client.start()
        } throws: { ($0 as? TesseraError)?.code == .storageUnavailable }
        #expect(harness.client.sessionState == .unavailable(.storageUnavailable))
        #expect(harness.client.profileState == .unavailable(.storageUnavailable))
        #expect(await harness.client.installationID == nil)
        #expect(harness.transport.log.isEmpty, "no anonymous session for a new identity")
        #expect(store.saves.withLock { $0 } == savesBefore)
        await #expect(throws: TesseraError.self) {
            try await harness.client.identify(signedIdentityToken: FakeServer.identityToken(sub: "a"))
        }

        // A retry while still locked changes nothing; once unlocked, the old identity comes back.
        await harness.clock.waitForSleepers(count: 1)
        harness.clock.advance(by: .seconds(2))
        await harness.clock.waitForSleepers(count: 1)
        #expect(await harness.client.installationID == nil)
        store.isLocked.withLock { $0 = false }
        let states = Recorder(harness.client.sessionUpdates)
        harness.clock.advance(by: .seconds(4))
        _ = await states.first { $0.value != nil }
        #expect(await harness.client.installationID == installation)
        #expect(harness.transport.count("POST /v1/sessions/anonymous") == 0)
        await harness.client.stop()
    }

    @Test("The encrypted file store round-trips, with mode 0600 and a fresh nonce per write")
    func fileStoreRoundTrip() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = EncryptedFileStore(directory: directory)
        #expect(try store.load("tessera") == nil)
        let value = Data("secret session".utf8)
        try store.save(value, for: "tessera")
        let path = store.path(for: "tessera")
        let first = try Data(contentsOf: URL(fileURLWithPath: path))
        try store.save(value, for: "tessera")
        let second = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(first != second, "a fresh random nonce per write")
        #expect(first.prefix(5) == Data("TSSR".utf8 + [1]))
        #expect(!String(decoding: first, as: UTF8.self).contains("secret"))
        #expect(try store.load("tessera") == value)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let keyAttributes = try FileManager.default.attributesOfItem(
            atPath: directory.appendingPathComponent("store.key").path)
        #expect((keyAttributes[.posixPermissions] as? Int) == 0o600)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".tmp")
        }
        #expect(leftovers.isEmpty)
        try store.remove("tessera")
        #expect(try store.load("tessera") == nil)
    }

    @Test("Every flipped bit, and every truncation, of a sealed file is reported as corrupted")
    func tamperedAndTruncated() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = SymmetricKey(size: .bits256)
        let store = EncryptedFileStore(directory: directory, keySource: .key(key))
        try store.save(Data("{\"v\":1}".utf8), for: "tessera")
        let url = URL(fileURLWithPath: store.path(for: "tessera"))
        let original = try Data(contentsOf: url)
        for index in original.indices {
            var tampered = original
            tampered[index] ^= 0x01
            try tampered.write(to: url)
            #expect(throws: CredentialStoreError.self) { try store.load("tessera") }
        }
        for length in 0..<original.count {
            try original.prefix(length).write(to: url)
            #expect {
                try store.load("tessera")
            } throws: { error in
                if case .corrupted = error as? CredentialStoreError { return true }
                return false
            }
        }
    }

    @Test("Replayed files: another key's file, another store's file, and an older file of the same key")
    func replay() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = EncryptedFileStore(directory: directory)
        try store.save(Data("one".utf8), for: "alpha")
        try store.save(Data("two".utf8), for: "beta")
        let alpha = URL(fileURLWithPath: store.path(for: "alpha"))
        let beta = URL(fileURLWithPath: store.path(for: "beta"))
        // Moving beta's file over alpha's fails: the storage key is bound as associated data.
        let betaBytes = try Data(contentsOf: beta)
        let alphaOld = try Data(contentsOf: alpha)
        try betaBytes.write(to: alpha)
        #expect(throws: CredentialStoreError.corrupted("authentication failed")) { try store.load("alpha") }
        // Another installation's file (another key) fails.
        let otherDirectory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: otherDirectory) }
        let other = EncryptedFileStore(directory: otherDirectory)
        try other.save(Data("three".utf8), for: "alpha")
        try Data(contentsOf: URL(fileURLWithPath: other.path(for: "alpha"))).write(to: alpha)
        #expect(throws: CredentialStoreError.corrupted("authentication failed")) { try store.load("alpha") }
        // An older file of the same key decrypts (GCM cannot see a rollback): documented; the server
        // check then ends a session revoked since.
        try store.save(Data("newer".utf8), for: "alpha")
        try alphaOld.write(to: alpha)
        #expect(try store.load("alpha") == Data("one".utf8))
        // A missing key file with a sealed file present: corrupted, never silently "nothing stored".
        try FileManager.default.removeItem(at: directory.appendingPathComponent("store.key"))
        #expect(throws: CredentialStoreError.self) { try store.load("alpha") }
    }

    @Test("A corrupted state file is removed, reported, and replaced by a fresh anonymous identity")
    func corruptedStateReplaced() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = EncryptedFileStore(directory: directory)
        let first = Harness(store: store)
        try await first.start(quiet: true)
        let installation = try #require(await first.client.installationID)
        let url = URL(fileURLWithPath: store.path(for: "tessera"))
        var bytes = try Data(contentsOf: url)
        bytes[bytes.count - 1] ^= 0xFF
        try bytes.write(to: url)

        let second = first.relaunch()
        let events = Recorder(second.client.events)
        let states = Recorder(second.client.sessionUpdates)
        try await second.client.start()
        _ = await events.first { $0 == .storageCorrupted }
        _ = await states.first { $0 == .unavailable(.storageLost) }
        #expect(await second.client.installationID != installation)
        #expect(second.client.sessionState.value != nil)
        #expect(try store.load("tessera") != nil)
        await second.client.stop()
    }

    @Test("Two processes creating the key file at once: both keep a readable state (bug 7)")
    func keyFileCreationRace() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The extension's store writes its whole state while the app's store is between "no key file"
        // and creating one: the app must adopt the extension's key, not replace it.
        let extensionStore = EncryptedFileStore(directory: directory)
        var appStore = EncryptedFileStore(directory: directory)
        let hookRuns = Locked(0)
        appStore.beforeCreatingKey = {
            hookRuns.withLock { $0 += 1 }
            guard hookRuns.withLock({ $0 }) == 1 else { return }
            try? extensionStore.save(Data("extension state".utf8), for: "extension")
        }
        try appStore.save(Data("app state".utf8), for: "app")
        #expect(hookRuns.withLock { $0 } == 1)
        #expect(try extensionStore.load("extension") == Data("extension state".utf8))
        #expect(try appStore.load("app") == Data("app state".utf8))
        #expect(try appStore.load("extension") == Data("extension state".utf8))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasPrefix(".")
        }
        #expect(leftovers.isEmpty, "no temporary files left behind")
    }

    @Test("An unusable key file is replaced exclusively; the new key reads back")
    func unusableKeyFileReplaced() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data([1, 2, 3]).write(to: directory.appendingPathComponent("store.key"))
        let store = EncryptedFileStore(directory: directory)
        try store.save(Data("state".utf8), for: "tessera")
        #expect(try store.load("tessera") == Data("state".utf8))
        #expect(try Data(contentsOf: directory.appendingPathComponent("store.key")).count == 32)
    }

    @Test("A client restores its session from the encrypted file store")
    func clientOnFileStore() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = Harness(store: EncryptedFileStore(directory: directory))
        try await first.start(quiet: true)
        let second = first.relaunch()
        try await second.client.start()
        #expect(await second.client.sessions.current == (await first.client.sessions.current))
        await second.client.stop()
    }
}

@Suite("Wycheproof AES-GCM through the store's decryption path")
struct WycheproofAESGCMTests {
    struct Vector: Decodable {
        var tcId: Int
        var key: String
        var iv: String
        var aad: String
        var msg: String
        var ct: String
        var tag: String
        var result: String
    }
    struct Group: Decodable {
        var keySize: Int
        var ivSize: Int
        var tagSize: Int
        var tests: [Vector]
    }
    struct File: Decodable { var testGroups: [Group] }

    static func hex(_ text: String) -> Data { Data(hexBytes(text)) }

    @Test("Valid vectors decrypt to the message; every invalid one fails")
    func vectors() throws {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/wycheproof/aes_gcm_test.json")
        let file = try JSONDecoder().decode(File.self, from: Data(contentsOf: url))
        var valid = 0
        var invalid = 0
        for group in file.testGroups where group.keySize == 256 && group.ivSize == 96 && group.tagSize == 128 {
            for vector in group.tests {
                let key = SymmetricKey(data: Self.hex(vector.key))
                let combined = Self.hex(vector.iv) + Self.hex(vector.ct) + Self.hex(vector.tag)
                let result = Result { () throws(CredentialStoreError) -> Data in
                    try EncryptedFileStore.open(combined: combined, authenticating: Self.hex(vector.aad), using: key)
                }
                switch vector.result {
                case "valid":
                    valid += 1
                    #expect(try result.get() == Self.hex(vector.msg), "tcId \(vector.tcId)")
                default:
                    invalid += 1
                    #expect(throws: CredentialStoreError.self, "tcId \(vector.tcId)") { try result.get() }
                }
            }
        }
        #expect(valid > 0 && invalid > 0)
        #expect(valid + invalid == 66)
    }
}
