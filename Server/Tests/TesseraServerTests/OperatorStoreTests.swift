import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// A migrated store of the backend, without a project: operators belong to the deployment.
func makeOperatorStore(_ backend: StoreBackend) async throws -> any TesseraStore {
    let store = try backend.makeStore()
    try await store.migrate()
    return store
}

@Suite("Operator storage: accounts, enrollments and console sessions on every backend")
struct OperatorStoreTests {
    static let now: Int64 = 1_795_000_000

    static func record(_ email: String, role: OperatorRole = .admin, at time: Int64 = now) -> OperatorRecord {
        OperatorRecord(
            id: TimeOrderedID.make(prefix: "opr_", now: Date(timeIntervalSince1970: TimeInterval(time))), email: email,
            role: role, createdAt: time)
    }

    /// A new admin with `email`, stored with a pending enrollment.
    static func enrolled(_ email: String, in store: any TesseraStore) async throws -> OperatorRecord {
        let record = record(email)
        try await store.createOperator(
            record, enrollmentTokenHash: OpaqueToken.sha256("e"), enrollmentExpiresAt: now + 900)
        return record
    }

    @Test("Operators round-trip, oldest first; an email is taken once", arguments: StoreBackend.allCases)
    func roundTrip(backend: StoreBackend) async throws {
        let store = try await makeOperatorStore(backend)
        let first = Self.record("first@example.com", role: .owner)
        let second = Self.record("second@example.com", role: .viewer, at: Self.now + 5)
        try await store.createOperator(
            first, enrollmentTokenHash: OpaqueToken.sha256("t1"), enrollmentExpiresAt: Self.now + 900)
        try await store.createOperator(
            second, enrollmentTokenHash: OpaqueToken.sha256("t2"), enrollmentExpiresAt: Self.now + 900)
        #expect(try await store.operators() == [first, second])
        #expect(try await store.operatorRecord(id: first.id) == first)
        #expect(try await store.operatorRecord(email: "second@example.com") == second)
        #expect(try await store.operatorRecord(email: "nobody@example.com") == nil)
        let duplicate = Self.record("first@example.com")
        let error = await #expect(throws: CoreError.self) {
            try await store.createOperator(
                duplicate, enrollmentTokenHash: OpaqueToken.sha256("t3"), enrollmentExpiresAt: Self.now + 900)
        }
        #expect(error?.code == .operatorExists)
        #expect(try await store.operators().count == 2)
        try await store.close()
    }

    @Test("An enrollment works until it expires, once; a new one replaces the old", arguments: StoreBackend.allCases)
    func enrollments(backend: StoreBackend) async throws {
        let store = try await makeOperatorStore(backend)
        let record = Self.record("enrol@example.com")
        let token = OpaqueToken.sha256("enrol-token")
        try await store.createOperator(record, enrollmentTokenHash: token, enrollmentExpiresAt: Self.now + 900)
        #expect(try await store.enrollment(tokenHash: token, now: Self.now + 899)?.id == record.id)
        #expect(try await store.enrollment(tokenHash: token, now: Self.now + 900) == nil)
        #expect(
            try await store.completeEnrollment(
                tokenHash: token, passwordHash: "h", totpSecret: nil, totpLastStep: nil, now: Self.now + 900)
                == nil)

        let fresh = OpaqueToken.sha256("fresh")
        #expect(try await store.replaceEnrollment(operatorID: record.id, tokenHash: fresh, expiresAt: Self.now + 2000))
        #expect(!(try await store.replaceEnrollment(operatorID: "opr_unknown", tokenHash: fresh, expiresAt: 1)))
        #expect(try await store.enrollment(tokenHash: token, now: Self.now) == nil)
        let secret = TOTP.generateSecret()
        let enrolled = try #require(
            try await store.completeEnrollment(
                tokenHash: fresh, passwordHash: "$2b$hash", totpSecret: secret, totpLastStep: nil, now: Self.now + 10))
        #expect(enrolled.passwordHash == "$2b$hash")
        #expect(enrolled.totpSecret == secret)
        #expect(enrolled.enrolledAt == Self.now + 10)
        #expect(try await store.operatorRecord(id: record.id) == enrolled)
        // Used once.
        #expect(try await store.enrollment(tokenHash: fresh, now: Self.now + 11) == nil)
        #expect(
            try await store.completeEnrollment(
                tokenHash: fresh, passwordHash: "x", totpSecret: nil, totpLastStep: nil, now: Self.now + 11)
                == nil)
        try await store.close()
    }

    @Test(
        "Console sessions: lookup, idle and absolute expiry, touch, logins and TOTP steps, removal",
        arguments: StoreBackend.allCases)
    func sessions(backend: StoreBackend) async throws {
        let store = try await makeOperatorStore(backend)
        let record = try await Self.enrolled("session@example.com", in: store)
        let session = OperatorSessionRecord(
            id: "ops_1", operatorID: record.id, tokenHash: OpaqueToken.sha256("cookie"), csrfToken: "csrf",
            createdAt: Self.now, lastSeenAt: Self.now, expiresAt: Self.now + OperatorSessionRecord.absoluteSeconds)
        try await store.createOperatorSession(session)
        let found = try #require(
            try await store.operatorSession(tokenHash: OpaqueToken.sha256("cookie"), now: Self.now))
        #expect(found.0 == session)
        #expect(found.1 == record)
        #expect(try await store.operatorSession(tokenHash: OpaqueToken.sha256("other"), now: Self.now) == nil)
        // Idle: 12 hours after the last use it is gone; a touch moves that forward, never back.
        let idle = OperatorSessionRecord.idleSeconds
        #expect(try await store.operatorSession(tokenHash: session.tokenHash, now: Self.now + idle) == nil)
        try await store.touchOperatorSession(id: session.id, lastSeenAt: Self.now + idle - 1)
        try await store.touchOperatorSession(id: session.id, lastSeenAt: Self.now + 5)
        #expect(
            try await store.operatorSession(tokenHash: session.tokenHash, now: Self.now + idle)?.0.lastSeenAt
                == Self.now + idle - 1)
        // Absolute: however recently used.
        try await store.touchOperatorSession(id: session.id, lastSeenAt: session.expiresAt - 1)
        #expect(try await store.operatorSession(tokenHash: session.tokenHash, now: session.expiresAt - 1) != nil)
        #expect(try await store.operatorSession(tokenHash: session.tokenHash, now: session.expiresAt) == nil)

        // Logins: a TOTP step is accepted once, and only a later one after it.
        #expect(try await store.recordOperatorLogin(id: record.id, now: Self.now + 1, totpStep: 100))
        #expect(!(try await store.recordOperatorLogin(id: record.id, now: Self.now + 2, totpStep: 100)))
        #expect(!(try await store.recordOperatorLogin(id: record.id, now: Self.now + 2, totpStep: 99)))
        #expect(try await store.recordOperatorLogin(id: record.id, now: Self.now + 3, totpStep: 101))
        #expect(try await store.recordOperatorLogin(id: record.id, now: Self.now + 4, totpStep: nil))
        let logged = try #require(try await store.operatorRecord(id: record.id))
        #expect(logged.totpLastStep == 101 && logged.lastLoginAt == Self.now + 4)

        try await store.deleteOperatorSession(id: session.id)
        #expect(try await store.operatorSession(tokenHash: session.tokenHash, now: Self.now) == nil)
        for index in 0..<3 {
            var other = session
            other.id = "ops_\(index + 10)"
            other.tokenHash = OpaqueToken.sha256("cookie-\(index)")
            try await store.createOperatorSession(other)
        }
        #expect(try await store.deleteOperatorSessions(operatorID: record.id) == 3)
        try await store.createOperatorSession(session)
        #expect(try await store.removeOperator(id: record.id))
        #expect(!(try await store.removeOperator(id: record.id)))
        #expect(try await store.operatorSession(tokenHash: session.tokenHash, now: Self.now) == nil)
        #expect(try await store.operators().isEmpty)
        try await store.close()
    }

    @Test(
        "The cleanup deletes expired enrollments and expired or idle console sessions", arguments: StoreBackend.allCases
    )
    func cleanup(backend: StoreBackend) async throws {
        let store = try await makeOperatorStore(backend)
        let record = try await Self.enrolled("clean@example.com", in: store)
        let base = OperatorSessionRecord(
            id: "ops_live", operatorID: record.id, tokenHash: OpaqueToken.sha256("live"), csrfToken: "c",
            createdAt: Self.now, lastSeenAt: Self.now + 1000, expiresAt: Self.now + 100_000)
        var idle = base
        (idle.id, idle.tokenHash, idle.lastSeenAt) = ("ops_idle", OpaqueToken.sha256("idle"), Self.now)
        var ended = base
        (ended.id, ended.tokenHash, ended.expiresAt) = ("ops_ended", OpaqueToken.sha256("ended"), Self.now + 900)
        for session in [base, idle, ended] { try await store.createOperatorSession(session) }
        let at = Self.now + OperatorSessionRecord.idleSeconds + 1
        let counts = try await store.deleteExpired(now: at, batchSize: 100)
        #expect(counts.operatorSessions == 2)
        #expect(counts.operatorEnrollments == 1)
        #expect(try await store.operatorSession(tokenHash: base.tokenHash, now: at) != nil)
        #expect(try await store.deleteExpired(now: at, batchSize: 100).total == 0)
        try await store.close()
    }
}
