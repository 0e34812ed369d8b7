import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// A console sign-in racing a password reset or a removal of its operator, with the gates of
/// ``ProfileRaceTests`` (the operator's row held on PostgreSQL, the writer on SQLite).
@Suite("A console sign-in decides on the operator's locked row")
struct OperatorRaceTests {
    /// Operator accounts over a store ready for races, and an enrolled operator.
    private static func operatorAccounts(_ backend: StoreBackend) async throws -> (
        OperatorAccounts, store: any TesseraStore, OperatorRecord
    ) {
        let store = try backend.makeRaceStore()
        try await store.migrate()
        let clock = TestClock()
        let accounts = OperatorAccounts(store: store, now: { clock.now }, bcryptCost: 4)
        let email = "ops-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let (_, token) = try await accounts.create(email: email, role: .admin)
        let record = try await accounts.enroll(token: token, password: OperatorFixture.password, totp: nil)
        return (accounts, store, record)
    }

    /// Holds the operator's row, queues `first` and then a sign-in with the enrolled password behind
    /// it, in that order, and opens the gate; answers `first`'s result and how the sign-in ended.
    private static func logIn<T: Sendable>(
        after first: @escaping @Sendable () async throws -> T, accounts: OperatorAccounts, store: any TesseraStore,
        record: OperatorRecord
    ) async throws -> (first: T, logIn: ConsoleError?) {
        let gate = try await holdWrites(store, rows: [.operator(record.id)])
        let queued = Task { try await first() }
        try await gate.waitForQueued(1)
        let logIn = Task {
            try await accounts.logIn(
                email: record.email, password: OperatorFixture.password, totpCode: nil, clientAddress: "192.0.2.9")
        }
        try await gate.waitForQueued(2)
        try await gate.open()
        let result = try await queued.value
        return (result, await consoleError { _ = try await logIn.value })
    }

    @Test(
        "a password reset ∥ a sign-in with the old password: the sign-in is refused, no session survives",
        arguments: StoreBackend.allCases)
    func resetThenLogIn(backend: StoreBackend) async throws {
        let (accounts, store, record) = try await Self.operatorAccounts(backend)
        let reset = try await accounts.newEnrollment(operatorID: record.id)
        let (_, logIn) = try await Self.logIn(
            after: { try await accounts.enroll(token: reset, password: "a brand new passphrase", totp: nil) },
            accounts: accounts, store: store, record: record)
        #expect(logIn == .invalidLogin, "the old password no longer signs in")
        #expect(
            await consoleError {
                _ = try await accounts.logIn(
                    email: record.email, password: "a brand new passphrase", totpCode: nil, clientAddress: "192.0.2.9")
            } == nil)
        try await store.close()
    }

    @Test(
        "an operator's removal ∥ its sign-in: the sign-in is refused as unknown, never unavailable",
        arguments: StoreBackend.allCases)
    func removeThenLogIn(backend: StoreBackend) async throws {
        let (accounts, store, record) = try await Self.operatorAccounts(backend)
        let (removed, logIn) = try await Self.logIn(
            after: { try await accounts.remove(id: record.id) }, accounts: accounts, store: store, record: record)
        #expect(removed)
        #expect(logIn == .invalidLogin)
        try await store.close()
    }
}
