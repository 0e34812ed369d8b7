import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

@Suite("Console storage: flashes, lockout counters, API-key hints and the operator audit, on every backend")
struct ConsoleStoreTests {
    static let now: Int64 = 1_795_000_000

    /// An operator with one console session; answers the session's ID.
    static func session(_ store: any TesseraStore, email: String = "ops@example.com") async throws -> String {
        let record = OperatorStoreTests.record(email)
        try await store.createOperator(
            record, enrollmentTokenHash: OpaqueToken.sha256(UUID().uuidString), enrollmentExpiresAt: now + 900)
        let session = OperatorSessionRecord(
            id: TimeOrderedID.make(prefix: "ops_", now: Date(timeIntervalSince1970: TimeInterval(now))),
            operatorID: record.id, tokenHash: OpaqueToken.sha256(UUID().uuidString), csrfToken: "c", createdAt: now,
            lastSeenAt: now, expiresAt: now + 3600)
        try await store.createOperatorSession(session)
        return session.id
    }

    @Test("A flash is taken once, by its own session only, and not after it expired", arguments: StoreBackend.allCases)
    func flashes(backend: StoreBackend) async throws {
        let store = try await makeOperatorStore(backend)
        let mine = try await Self.session(store)
        let theirs = try await Self.session(store, email: "other@example.com")
        try await store.saveConsoleFlash(
            id: "f1", sessionID: mine, sealed: [1, 2, 3], expiresAt: Self.now + 600, now: Self.now)
        #expect(try await store.takeConsoleFlash(id: "f1", sessionID: theirs, now: Self.now) == nil)
        #expect(try await store.takeConsoleFlash(id: "f1", sessionID: mine, now: Self.now) == [1, 2, 3])
        #expect(
            try await store.takeConsoleFlash(id: "f1", sessionID: mine, now: Self.now) == nil, "gone after one view")
        try await store.saveConsoleFlash(
            id: "f2", sessionID: mine, sealed: [4], expiresAt: Self.now + 600, now: Self.now)
        #expect(try await store.takeConsoleFlash(id: "f2", sessionID: mine, now: Self.now + 600) == nil, "expired")
        // Ending the session ends its flashes.
        try await store.saveConsoleFlash(
            id: "f3", sessionID: mine, sealed: [5], expiresAt: Self.now + 600, now: Self.now)
        try await store.deleteOperatorSession(id: mine)
        #expect(try await store.takeConsoleFlash(id: "f3", sessionID: mine, now: Self.now) == nil)
        try await store.close()
    }

    @Test(
        "Lockout counters: read without counting, cleared for an email from every address",
        arguments: StoreBackend.allCases)
    func counters(backend: StoreBackend) async throws {
        let store = try await makeOperatorStore(backend)
        let window = RateLimitWindow(containing: Self.now, seconds: 900)
        let pair = { (address: String) in
            RateLimitKey(projectID: "", bucket: .consoleLoginByEmailAndAddress, key: "ada@example.com " + address)
        }
        let other = RateLimitKey(projectID: "", bucket: .consoleLoginByEmailAndAddress, key: "ada@example.comx 1.1.1.1")
        _ = try await store.hitRateLimits([pair("192.0.2.1"), pair("192.0.2.2"), other], window: window)
        _ = try await store.hitRateLimits([pair("192.0.2.1")], window: window)
        #expect(
            try await store.rateLimitCounts([pair("192.0.2.1"), pair("192.0.2.2"), pair("192.0.2.3")], window: window)
                == [2, 1, 0])
        #expect(try await store.rateLimitCounts([pair("192.0.2.1")], window: window) == [2], "reading does not count")
        let cleared = try await store.clearRateLimits(
            projectID: "", bucket: .consoleLoginByEmailAndAddress, key: "ada@example.com")
        #expect(cleared == 2)
        #expect(
            try await store.rateLimitCounts([pair("192.0.2.1"), other], window: window) == [0, 1], "another email stays"
        )
        try await store.close()
    }

    @Test("API-key hints by key hash, per project", arguments: StoreBackend.allCases)
    func hints(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend)
        let store = environment.store
        let projectID = environment.project.project.id
        try await store.saveAPIKeyHint(projectID: projectID, keyHash: [1], hint: "pk_abc")
        try await store.saveAPIKeyHint(projectID: projectID, keyHash: [2], hint: "sk_…wxyz")
        try await store.saveAPIKeyHint(projectID: projectID, keyHash: [2], hint: "sk_…1234")
        let hints = try await store.apiKeyHints(projectID: projectID)
        #expect(hints[[1]] == "pk_abc")
        #expect(hints[[2]] == "sk_…1234")
        #expect(try await store.apiKeyHints(projectID: "prj_none").isEmpty)
    }

    @Test("The operator audit: newest first, paged by ID", arguments: StoreBackend.allCases)
    func audit(backend: StoreBackend) async throws {
        let store = try await makeOperatorStore(backend)
        var ids: [String] = []
        for (index, kind) in [OperatorAuditRecord.Kind.signInFailed, .locked, .unlocked].enumerated() {
            let at = Date(timeIntervalSince1970: TimeInterval(Self.now + Int64(index)))
            let entry = OperatorAuditRecord(
                id: TimeOrderedID.make(prefix: "oau_", now: at), kind: kind, operatorEmail: "ada@example.com",
                actorEmail: kind == .unlocked ? "owner@example.com" : nil, clientAddress: "192.0.2.1",
                detail: kind == .locked ? "until 12:15 UTC" : nil, createdAt: Self.now + Int64(index))
            try await store.appendOperatorAudit(entry)
            ids.append(entry.id)
        }
        let all = try await store.operatorAudit(before: nil, limit: 10)
        #expect(all.map(\.id) == ids.reversed())
        #expect(all.first?.actorEmail == "owner@example.com")
        #expect(all[1].detail == "until 12:15 UTC")
        #expect(try await store.operatorAudit(before: ids[2], limit: 1).map(\.id) == [ids[1]])
        try await store.close()
    }

    @Test("A new SQLite database, its WAL and a backup are readable by their owner only")
    func privateFiles() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-mode-\(UUID())").path
        let path = directory + "/t.sqlite"
        let store = try SQLiteStore(path: path, masterKeys: MasterKeyring(current: .generate()))
        try await store.migrate()
        try await store.backup(to: directory + "/copy.sqlite")
        for file in [path, path + "-wal", directory + "/copy.sqlite"] {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode.map { $0 & 0o077 } == 0, "\(file)")
        }
        try await store.close()
    }
}
