import Foundation
import PostgresNIO
import TesseraTokens
import Testing

@testable import TesseraServer

/// Operator accounts on the selected backend, with a hand-moved clock and bcrypt at its minimum cost.
struct OperatorFixture {
    let store: any TesseraStore
    let clock: TestClock
    let accounts: OperatorAccounts
    static let password = "correct horse battery staple"

    static func make() async throws -> OperatorFixture {
        let store = try await makeOperatorStore(.selected)
        let clock = TestClock()
        return OperatorFixture(
            store: store, clock: clock, accounts: OperatorAccounts(store: store, now: { clock.now }, bcryptCost: 4))
    }

    /// An enrolled operator; with `totp`, its secret.
    func enrolled(_ email: String, totp: [UInt8]? = nil) async throws -> OperatorRecord {
        let (_, token) = try await accounts.create(email: email, role: .admin)
        let enrollment = totp.map { TOTPEnrollment(secret: $0, code: TOTP(secret: $0).code(at: clock.seconds)) }
        return try await accounts.enroll(token: token, password: Self.password, totp: enrollment)
    }

    func logIn(_ email: String, _ password: String = password, code: String? = nil, from address: String = "192.0.2.1")
        async throws -> (OperatorSessionRecord, token: String)
    {
        try await accounts.logIn(email: email, password: password, totpCode: code, clientAddress: address)
    }
}

/// The error a throwing call threw, as a ``ConsoleError``.
func consoleError(_ body: () async throws -> Void) async -> ConsoleError? {
    do {
        try await body()
        return nil
    } catch {
        return error as? ConsoleError
    }
}

@Suite("Operator accounts: enrollment, login, TOTP, rate limit, console sessions")
struct OperatorAccountsTests {
    @Test("An enrollment link works for 15 minutes, once, and sets a bcrypt password")
    func enrollment() async throws {
        let fixture = try await OperatorFixture.make()
        let accounts = fixture.accounts
        let (created, token) = try await accounts.create(email: "  Ops@Example.COM ", role: .owner)
        #expect(created.email == "ops@example.com")
        #expect(created.id.hasPrefix("opr_") && !created.isEnrolled)
        #expect(Base64URL.decode(token)?.count == 32)
        #expect(
            await consoleError { _ = try await accounts.create(email: "ops@example.com", role: .viewer) }
                == .operatorExists)
        #expect(
            await consoleError { _ = try await accounts.create(email: "not-an-email", role: .viewer) } == .invalidEmail)
        #expect(try await accounts.enrollment(token: token)?.id == created.id)
        #expect(try await accounts.enrollment(token: token + "x") == nil)

        #expect(
            await consoleError { _ = try await accounts.enroll(token: token, password: "short", totp: nil) }
                == .weakPassword("A password has at least 12 characters."))
        #expect(
            await consoleError {
                _ = try await accounts.enroll(token: token, password: String(repeating: "p", count: 129), totp: nil)
            } == .weakPassword("A password has at most 128 characters."))
        let secret = TOTP.generateSecret()
        #expect(
            await consoleError {
                _ = try await accounts.enroll(
                    token: token, password: OperatorFixture.password,
                    totp: TOTPEnrollment(
                        secret: secret,
                        code: TOTP(secret: secret).code(step: TOTP.step(at: fixture.clock.seconds) + 5)))
            } == .invalidTOTP)
        // Failed attempts leave the link usable.
        let enrolled = try await accounts.enroll(token: token, password: OperatorFixture.password, totp: nil)
        #expect(enrolled.isEnrolled && enrolled.totpSecret == nil)
        #expect(enrolled.passwordHash?.hasPrefix("$2") == true)
        #expect(enrolled.passwordHash?.contains(OperatorFixture.password) == false)
        #expect(await accounts.verifyPassword(enrolled, OperatorFixture.password))
        #expect(!(await accounts.verifyPassword(enrolled, OperatorFixture.password + "!")))
        // Single use.
        #expect(
            await consoleError {
                _ = try await accounts.enroll(token: token, password: OperatorFixture.password, totp: nil)
            }
                == .enrollmentExpired)

        // Expiry: a link 15 minutes old no longer works.
        let (late, lateToken) = try await accounts.create(email: "late@example.com", role: .viewer)
        fixture.clock.advance(seconds: Double(OperatorAccounts.enrollmentSeconds))
        #expect(try await accounts.enrollment(token: lateToken) == nil)
        #expect(
            await consoleError {
                _ = try await accounts.enroll(token: lateToken, password: OperatorFixture.password, totp: nil)
            }
                == .enrollmentExpired)
        // A new link replaces it.
        let again = try await accounts.newEnrollment(operatorID: late.id)
        #expect(try await accounts.enrollment(token: again)?.id == late.id)
        #expect(
            await consoleError { _ = try await accounts.newEnrollment(operatorID: "opr_none") } == .operatorNotFound)
        try await fixture.store.close()
    }

    @Test("Login: right password opens a session; every wrong part is invalid_login; unknown emails cost bcrypt too")
    func login() async throws {
        let fixture = try await OperatorFixture.make()
        let record = try await fixture.enrolled("login@example.com")
        let (session, token) = try await fixture.logIn(" LOGIN@example.com")
        #expect(session.operatorID == record.id && session.id.hasPrefix("ops_"))
        #expect(session.tokenHash == OpaqueToken.sha256(token))
        #expect(session.expiresAt == fixture.clock.seconds + OperatorAccounts.absoluteSeconds)
        #expect(Base64URL.decode(session.csrfToken)?.count == 32)
        #expect(session.matchesCSRF(session.csrfToken) && !session.matchesCSRF(session.csrfToken + "x"))
        let found = try #require(try await fixture.accounts.session(token: token))
        #expect(found.0 == session && found.1.id == record.id)
        #expect(found.1.lastLoginAt == fixture.clock.seconds)

        #expect(
            await consoleError { _ = try await fixture.logIn("login@example.com", "wrong password!!") } == .invalidLogin
        )
        #expect(await consoleError { _ = try await fixture.logIn("nobody@example.com") } == .invalidLogin)
        // Not enrolled yet: the same answer.
        _ = try await fixture.accounts.create(email: "pending@example.com", role: .viewer)
        #expect(await consoleError { _ = try await fixture.logIn("pending@example.com") } == .invalidLogin)

        try await fixture.accounts.logOut(sessionID: session.id)
        #expect(try await fixture.accounts.session(token: token) == nil)
        try await fixture.store.close()
    }

    @Test("TOTP: required after the right password, checked, and never accepted twice")
    func totp() async throws {
        let fixture = try await OperatorFixture.make()
        let secret = TOTP.generateSecret()
        let totp = TOTP(secret: secret)
        let record = try await fixture.enrolled("totp@example.com", totp: secret)
        #expect(record.totpSecret == secret)
        #expect(await consoleError { _ = try await fixture.logIn("totp@example.com") } == .totpRequired)
        #expect(await consoleError { _ = try await fixture.logIn("totp@example.com", code: " ") } == .totpRequired)
        // A wrong password with a code is still only invalid_login.
        let code = totp.code(at: fixture.clock.seconds)
        #expect(
            await consoleError { _ = try await fixture.logIn("totp@example.com", "wrong password!!", code: code) }
                == .invalidLogin)
        let wrong = code == "123456" ? "654321" : "123456"
        #expect(await consoleError { _ = try await fixture.logIn("totp@example.com", code: wrong) } == .invalidTOTP)
        // The code that proved the key at enrollment is used up: it cannot sign in.
        #expect(await consoleError { _ = try await fixture.logIn("totp@example.com", code: code) } == .invalidTOTP)
        #expect(
            try await fixture.store.operatorRecord(id: record.id)?.totpLastStep == TOTP.step(at: fixture.clock.seconds))

        fixture.clock.advance(seconds: 30)
        let code2 = totp.code(at: fixture.clock.seconds)
        _ = try await fixture.logIn("totp@example.com", code: code2)
        // The same code again, even within its 30 seconds: refused.
        #expect(await consoleError { _ = try await fixture.logIn("totp@example.com", code: code2) } == .invalidTOTP)
        fixture.clock.advance(seconds: 30)
        _ = try await fixture.logIn("totp@example.com", code: totp.code(at: fixture.clock.seconds))
        #expect(
            try await fixture.store.operatorRecord(id: record.id)?.totpLastStep == TOTP.step(at: fixture.clock.seconds))
        try await fixture.store.close()
    }

    @Test("Ten failures for an email from one address lock that address out for it, not the owner elsewhere")
    func rateLimitByEmail() async throws {
        let fixture = try await OperatorFixture.make()
        _ = try await fixture.enrolled("limited@example.com")
        _ = try await fixture.enrolled("other@example.com")
        // A success does not count.
        _ = try await fixture.logIn("limited@example.com", from: "198.51.100.1")
        for attempt in 0..<Int(OperatorAccounts.failuresPerEmail) {
            #expect(
                await consoleError {
                    _ = try await fixture.logIn("limited@example.com", "wrong password!!", from: "198.51.100.1")
                } == .invalidLogin, "attempt \(attempt)")
        }
        guard
            case .locked(let until, let wait) = await consoleError({
                _ = try await fixture.logIn("limited@example.com", from: "198.51.100.1")
            })
        else {
            Issue.record("the right password from the guessing address was not refused")
            return
        }
        #expect(wait > 0 && wait <= OperatorAccounts.failureWindowSeconds)
        #expect(until == fixture.clock.seconds + wait)
        #expect(ConsoleError.locked(until: until, retryAfter: wait).message.contains("locked until"))
        // The owner at their own address is never locked out by someone else's guesses.
        _ = try await fixture.logIn("limited@example.com", from: "203.0.113.50")
        // Another email from the guessing address still logs in.
        _ = try await fixture.logIn("other@example.com", from: "198.51.100.1")
        // A fresh process (another node) reads the same counters.
        let node = OperatorAccounts(store: fixture.store, now: { fixture.clock.now }, bcryptCost: 4)
        guard
            case .locked = await consoleError({
                _ = try await node.logIn(
                    email: "limited@example.com", password: OperatorFixture.password, totpCode: nil,
                    clientAddress: "198.51.100.1")
            })
        else {
            Issue.record("another node let the locked address through")
            return
        }
        // Unlocked on one node: every node lets the right password in at once.
        try await fixture.accounts.unlock(
            email: "LIMITED@example.com", actorEmail: "owner@example.com", clientAddress: nil)
        _ = try await node.logIn(
            email: "limited@example.com", password: OperatorFixture.password, totpCode: nil,
            clientAddress: "198.51.100.1")
        let audit = try await fixture.store.operatorAudit(before: nil, limit: 50)
        #expect(audit.filter { $0.kind == .signInFailed }.count == Int(OperatorAccounts.failuresPerEmail))
        #expect(audit.contains { $0.kind == .locked && $0.operatorEmail == "limited@example.com" })
        #expect(audit.contains { $0.kind == .unlocked && $0.actorEmail == "owner@example.com" })
        #expect(audit.first?.kind == .signedIn)
        #expect(
            await consoleError {
                try await fixture.accounts.unlock(email: "nobody@example.com", actorEmail: nil, clientAddress: nil)
            } == .operatorNotFound)
        try await fixture.store.close()
    }

    @Test("Wrong passwords at actions: the right one always works; the tenth wrong one ends the session, not sign-in")
    func reauthentication() async throws {
        let fixture = try await OperatorFixture.make()
        let record = try await fixture.enrolled("actions@example.com")
        let (session, _) = try await fixture.logIn("actions@example.com")
        for attempt in 1..<OperatorAccounts.failuresPerOperatorAction {
            let result = try await fixture.accounts.reauthenticate(
                record, password: "guess guess guess", sessionID: session.id, clientAddress: "192.0.2.1")
            #expect(result == .wrong(remaining: OperatorAccounts.failuresPerOperatorAction - attempt))
            #expect(
                try await fixture.accounts.reauthenticate(
                    record, password: OperatorFixture.password, sessionID: session.id, clientAddress: "192.0.2.1")
                    == .accepted, "the right password after \(attempt) wrong ones")
        }
        let last = try await fixture.accounts.reauthenticate(
            record, password: "guess guess guess", sessionID: session.id, clientAddress: "192.0.2.1")
        #expect(last == .signedOut)
        #expect(
            try await fixture.store.operatorSession(tokenHash: session.tokenHash, now: fixture.clock.seconds) == nil)
        // Sign-in is not locked by it, and the count starts again.
        let (again, _) = try await fixture.logIn("actions@example.com")
        #expect(
            try await fixture.accounts.reauthenticate(
                record, password: "guess guess guess", sessionID: again.id, clientAddress: "192.0.2.1")
                == .wrong(remaining: OperatorAccounts.failuresPerOperatorAction - 1))
        try await fixture.store.close()
    }

    @Test("Thirty failures from an address refuse every login from it, whatever the email")
    func rateLimitByAddress() async throws {
        let fixture = try await OperatorFixture.make()
        _ = try await fixture.enrolled("victim@example.com")
        for attempt in 0..<Int(OperatorAccounts.failuresPerAddress) {
            #expect(
                await consoleError { _ = try await fixture.logIn("guess\(attempt)@example.com", from: "203.0.113.7") }
                    == .invalidLogin)
        }
        guard
            case .rateLimited = await consoleError({
                _ = try await fixture.logIn("victim@example.com", from: "203.0.113.7")
            })
        else {
            Issue.record("the address was not limited")
            return
        }
        _ = try await fixture.logIn("victim@example.com", from: "203.0.113.8")
        try await fixture.store.close()
    }

    @Test("A console session ends 12 hours after its last use or 7 days after login; use is written once a minute")
    func sessionExpiry() async throws {
        let fixture = try await OperatorFixture.make()
        _ = try await fixture.enrolled("idle@example.com")
        let (session, token) = try await fixture.logIn("idle@example.com")
        fixture.clock.advance(seconds: 30)
        #expect(try await fixture.accounts.session(token: token)?.0.lastSeenAt == session.lastSeenAt)
        fixture.clock.advance(seconds: 30)
        #expect(try await fixture.accounts.session(token: token)?.0.lastSeenAt == session.lastSeenAt + 60)
        fixture.clock.advance(seconds: Double(OperatorAccounts.idleSeconds - 1))
        #expect(try await fixture.accounts.session(token: token) != nil)
        fixture.clock.advance(seconds: Double(OperatorAccounts.idleSeconds))
        #expect(try await fixture.accounts.session(token: token) == nil)

        // Absolute: used every 11 hours, it still ends after 7 days.
        let (fresh, freshToken) = try await fixture.logIn("idle@example.com")
        var elapsed: Int64 = 0
        while elapsed + 39_600 < OperatorAccounts.absoluteSeconds {
            fixture.clock.advance(seconds: 39_600)
            elapsed += 39_600
            #expect(try await fixture.accounts.session(token: freshToken) != nil, "after \(elapsed) s")
        }
        fixture.clock.advance(seconds: Double(fresh.expiresAt - fixture.clock.seconds))
        #expect(try await fixture.accounts.session(token: freshToken) == nil)
        try await fixture.store.close()
    }

    @Test("Removing an operator ends their sessions; a new enrollment ends them too")
    func removal() async throws {
        let fixture = try await OperatorFixture.make()
        let record = try await fixture.enrolled("gone@example.com")
        let (_, first) = try await fixture.logIn("gone@example.com")
        let (_, second) = try await fixture.logIn("gone@example.com")
        let link = try await fixture.accounts.newEnrollment(operatorID: record.id)
        // Until the new enrollment completes, the old password and sessions still work.
        #expect(try await fixture.accounts.session(token: first) != nil)
        _ = try await fixture.accounts.enroll(token: link, password: "another long password", totp: nil)
        #expect(try await fixture.accounts.session(token: first) == nil)
        #expect(try await fixture.accounts.session(token: second) == nil)
        #expect(await consoleError { _ = try await fixture.logIn("gone@example.com") } == .invalidLogin)
        let (_, third) = try await fixture.logIn("gone@example.com", "another long password")
        #expect(try await fixture.accounts.remove(id: record.id))
        #expect(try await fixture.accounts.session(token: third) == nil)
        #expect(!(try await fixture.accounts.remove(id: record.id)))
        #expect(
            await consoleError { _ = try await fixture.logIn("gone@example.com", "another long password") }
                == .invalidLogin)
        try await fixture.store.close()
    }

    /// What a copy of the database holds: SQLite's files and cells; for PostgreSQL the operator
    /// tables' rows as stored (a `pg_dump` needs a connection slot, which a busy test run may not have).
    static func copy(of store: any TesseraStore) async throws -> Data {
        if store is SQLiteStore { return Data(try await DatabaseDump.everything(store)) }
        let postgres = try #require(store as? PostgresStore)
        var text = ""
        for table in ["operators", "operator_sessions", "operator_enrollments"] {
            let rows = try await postgres.statement { client in
                try await client.rows("SELECT t::text FROM \(unescaped: table) t", logger: postgres.logger)
                    .map { try $0.text(0) }
            }
            #expect(table != "operators" || !rows.isEmpty)
            text += rows.joined(separator: "\n")
        }
        return Data(text.utf8)
    }

    @Test("The TOTP secret is sealed in the database, and keys rewrap covers it")
    func sealedTOTP() async throws {
        let fixture = try await OperatorFixture.make()
        let secret = TOTP.generateSecret()
        let record = try await fixture.enrolled("sealed@example.com", totp: secret)
        let cells = try await fixture.store.sealedCells().filter { $0.kind == .operatorTOTPSecret }
        #expect(cells.map(\.rowID) == [record.id])
        #expect(cells.allSatisfy { MasterKeyring.keyID(of: $0.stored) == fixture.store.masterKeys.current.id })
        let dump = try await Self.copy(of: fixture.store)
        let needles: [[UInt8]] = [
            secret, Array(Base32.encode(secret).utf8), Array(Base64URL.encode(secret).utf8),
            Array(Data(secret).base64EncodedString().utf8),
            Array(secret.map { String(format: "%02x", $0) }.joined().utf8),
        ]
        for needle in needles { #expect(dump.range(of: Data(needle)) == nil) }
        // The password is only a bcrypt hash, and the session and enrollment tokens only digests.
        #expect(dump.range(of: Data(OperatorFixture.password.utf8)) == nil)
        fixture.clock.advance(seconds: 30)  // the enrollment's code is used up
        let (_, token) = try await fixture.logIn(
            "sealed@example.com", code: TOTP(secret: secret).code(at: fixture.clock.seconds))
        #expect(try await Self.copy(of: fixture.store).range(of: Data(token.utf8)) == nil)

        // A rewrap under a new master key moves it, and the secret still opens.
        guard let sqlite = fixture.store as? SQLiteStore else {
            try await fixture.store.close()
            return
        }
        let moved = try SQLiteStore(
            path: sqlite.path, masterKeys: MasterKeyring(current: .generate(), previous: [sqlite.masterKeys.current]))
        let report = try await SecretResealer.rewrap(store: moved)
        #expect(report.rewrapped >= 1)
        #expect(try await moved.operatorRecord(id: record.id)?.totpSecret == secret)
        try await moved.close()
        try await fixture.store.close()
    }
}
