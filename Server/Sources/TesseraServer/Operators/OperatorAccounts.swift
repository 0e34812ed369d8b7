import Foundation
import Logging
import TesseraTokens

/// The operator accounts of the console: creation and enrollment links, password and TOTP login,
/// console sessions, removal. Everything below the console's HTTP layer.
///
/// Tokens (enrollment links, session cookies) are 32 random bytes in base64url; only their SHA-256
/// is stored. Passwords are hashed with bcrypt off the cooperative pool (``PasswordHasher``).
/// Failed logins are counted in the shared store per client address and per email, in fixed
/// 15-minute windows; a counter at its limit refuses every login of its kind, right or wrong,
/// until the window ends.
///
/// ```swift
/// let accounts = OperatorAccounts(store: store)
/// let (record, token) = try await accounts.create(email: "ops@example.com", role: .owner)
/// // the operator opens BASE/console/enroll?token=…
/// _ = try await accounts.enroll(token: token, password: "correct horse battery", totp: nil)
/// let (session, cookie) = try await accounts.logIn(
///     email: "ops@example.com", password: "correct horse battery", totpCode: nil, clientAddress: "192.0.2.1")
/// ```
public final class OperatorAccounts: Sendable {
    /// How long an enrollment link works: 15 minutes.
    public static let enrollmentSeconds: Int64 = 900
    /// How long a console session lives unused: 12 hours.
    public static let idleSeconds: Int64 = OperatorSessionRecord.idleSeconds
    /// How long a console session lives at most: 7 days.
    public static let absoluteSeconds: Int64 = OperatorSessionRecord.absoluteSeconds
    /// A session's `lastSeenAt` is written at most once per this many seconds.
    public static let touchSeconds: Int64 = 60
    /// Failed logins allowed per email from one client address in one window.
    public static let failuresPerEmail: Int64 = 10
    /// Wrong passwords allowed at destructive actions per operator in one window, before the console
    /// session they came from ends.
    public static let failuresPerOperatorAction: Int64 = 10
    /// Failed logins allowed per client address in one window.
    public static let failuresPerAddress: Int64 = 30
    /// The rate-limit window: 15 minutes.
    public static let failureWindowSeconds: Int64 = 900
    /// The shortest and longest password, in characters.
    public static let passwordLengths = 12...128

    let store: any TesseraStore
    private let clock: @Sendable () -> Date
    let hasher: PasswordHasher
    /// The failure counters this process saw at their limit (the counts are in the store).
    let blocks: RateLimitBlocks
    let logger: Logger

    /// - Parameters:
    ///   - store: where operators, enrollments, sessions and failure counters are kept.
    ///   - now: the clock (tests move it by hand).
    ///   - bcryptCost: bcrypt's log2 rounds; 12 (about 0.2 s) unless a test needs speed.
    ///   - logger: where sign-ins, failures, lockouts and unlocks are logged (at `notice`).
    public init(
        store: any TesseraStore, now: @escaping @Sendable () -> Date = { Date() }, bcryptCost: Int = 12,
        logger: Logger = Logger(label: "tessera.operators")
    ) {
        self.store = store
        self.logger = logger
        self.clock = now
        self.hasher = PasswordHasher(cost: UInt8(clamping: bcryptCost))
        self.blocks = RateLimitBlocks()
    }

    /// The current time in Unix seconds.
    var now: Int64 { Int64(clock().timeIntervalSince1970.rounded(.down)) }

    // MARK: Accounts

    /// Creates an operator who is not enrolled yet, with an enrollment token valid for
    /// ``enrollmentSeconds``; `invalidEmail` or `operatorExists`. Logged (`operator invited`) and
    /// audited, with the owner who did it (nil: the command line).
    ///
    /// - Parameters:
    ///   - actorID: the owner who invited (their operator ID), for the log; nil from the command line.
    ///   - actorEmail: the owner's email, for the audit of operator accounts.
    ///   - clientAddress: where the owner's request came from.
    public func create(
        email: String, role: OperatorRole, actorID: String? = nil, actorEmail: String? = nil,
        clientAddress: String? = nil
    ) async throws -> (OperatorRecord, enrollmentToken: String) {
        let email = try Self.normalized(email: email)
        // The ID keeps the clock's milliseconds: operators created in one second list in order.
        let date = clock()
        let now = Int64(date.timeIntervalSince1970.rounded(.down))
        let record = OperatorRecord(
            id: TimeOrderedID.make(prefix: "opr_", now: date), email: email, role: role, createdAt: now)
        let token = Self.newToken()
        try await mapped {
            try await store.createOperator(
                record, enrollmentTokenHash: OpaqueToken.sha256(token),
                enrollmentExpiresAt: now + Self.enrollmentSeconds)
        }
        logger.notice("operator invited", metadata: ["operator": "\(record.id)", "by": "\(actorID ?? "command line")"])
        await audit(
            .invited, email: email, actorEmail: actorEmail, clientAddress: clientAddress,
            detail: "role \(role.rawValue)")
        return (record, token)
    }

    /// A new enrollment token for an operator (its earlier links stop working): how a forgotten
    /// password is reset. The current password keeps working until the new enrollment completes.
    /// `operatorNotFound` when the operator is unknown.
    public func newEnrollment(operatorID: String) async throws -> String {
        let token = Self.newToken()
        let replaced = try await mapped {
            try await store.replaceEnrollment(
                operatorID: operatorID, tokenHash: OpaqueToken.sha256(token), expiresAt: now + Self.enrollmentSeconds)
        }
        guard replaced else { throw ConsoleError.operatorNotFound }
        return token
    }

    /// Every operator, oldest first.
    public func operators() async throws -> [OperatorRecord] {
        try await mapped { try await store.operators() }
    }

    /// The operator with this email, whatever its case and surrounding spaces.
    public func operatorRecord(email: String) async throws -> OperatorRecord? {
        guard let email = try? Self.normalized(email: email) else { return nil }
        return try await mapped { try await store.operatorRecord(email: email) }
    }

    /// Deletes an operator with its sessions and enrollment links; false when unknown. Logged
    /// (`operator removed`) and audited, with the owner who did it (nil: the command line), as
    /// ``create(email:role:actorID:actorEmail:clientAddress:)``.
    public func remove(
        id: String, actorID: String? = nil, actorEmail: String? = nil, clientAddress: String? = nil
    ) async throws -> Bool {
        guard let record = try await mapped({ try await store.operatorRecord(id: id) }),
            try await mapped({ try await store.removeOperator(id: id) })
        else { return false }
        logger.notice("operator removed", metadata: ["operator": "\(id)", "by": "\(actorID ?? "command line")"])
        await audit(.removed, email: record.email, actorEmail: actorEmail, clientAddress: clientAddress)
        return true
    }

    // MARK: Enrollment

    /// The operator a live enrollment token belongs to; nil when unknown, used or expired.
    public func enrollment(token: String) async throws -> OperatorRecord? {
        try await mapped { try await store.enrollment(tokenHash: OpaqueToken.sha256(token), now: now) }
    }

    /// Completes an enrollment: sets the password and, when given, the TOTP secret, whose code is
    /// checked first. The token is consumed; the operator's earlier sessions end.
    ///
    /// Throws `enrollmentExpired`, `weakPassword` (12 to 128 characters) or `invalidTOTP`.
    public func enroll(token: String, password: String, totp: TOTPEnrollment?) async throws -> OperatorRecord {
        let tokenHash = OpaqueToken.sha256(token)
        guard try await mapped({ try await store.enrollment(tokenHash: tokenHash, now: now) }) != nil else {
            throw ConsoleError.enrollmentExpired
        }
        try Self.checkPassword(password)
        var step: Int64?
        if let totp {
            guard (16...64).contains(totp.secret.count),
                let matched = TOTP(secret: totp.secret).verify(totp.code, at: now, after: nil)
            else { throw ConsoleError.invalidTOTP }
            // The code proved the key; it is used up, so it cannot sign in a second time.
            step = matched
        }
        let hash = try await hasher.hash(password)
        guard
            let record = try await mapped({
                try await store.completeEnrollment(
                    tokenHash: tokenHash, passwordHash: hash, totpSecret: totp?.secret, totpLastStep: step, now: now)
            })
        else { throw ConsoleError.enrollmentExpired }
        return record
    }

    // MARK: Login

    /// Checks an operator's password (and TOTP code) and opens a console session.
    ///
    /// Every failure of email or password is `invalidLogin`, and an unknown email costs the same
    /// bcrypt work as a known one. With the right password and TOTP enrolled, no code is
    /// `totpRequired` (not counted as a failure) and a wrong, stale or reused code `invalidTOTP`.
    /// Failures count against the client address and against the email *from that address*, so an
    /// outsider guessing an owner's password locks out only their own address, never the owner;
    /// past a limit every attempt from there is `locked` until the window ends or an owner unlocks
    /// the email (``unlock(email:actorEmail:clientAddress:)``). Sign-ins, failures and lockouts are
    /// logged at `notice` and kept in the audit of operator accounts.
    public func logIn(email: String, password: String, totpCode: String?, clientAddress: String) async throws
        -> (OperatorSessionRecord, token: String)
    {
        let normalized = (try? Self.normalized(email: email)) ?? email.lowercased()
        let limits = Self.signInLimits(email: normalized, clientAddress: clientAddress)
        let start = now
        let window = RateLimitWindow(containing: start, seconds: Self.failureWindowSeconds)
        // The counters are read from the shared store, so an unlock on any node counts at once.
        let counts = (try? await store.rateLimitCounts(limits.map(\.key), window: window)) ?? []
        if let refusal = Self.refusal(limits: limits, counts: counts, window: window, now: start) { throw refusal }

        let found = try await mapped { try await store.operatorRecord(email: normalized) }
        guard let record = found, let hash = record.passwordHash else {
            await hasher.verifyDummy(password)
            throw await failed(.invalidLogin, email: normalized, clientAddress: clientAddress, limits: limits)
        }
        guard await hasher.verify(password, hash: hash) else {
            throw await failed(.invalidLogin, email: normalized, clientAddress: clientAddress, limits: limits)
        }
        var step: Int64?
        if let secret = record.totpSecret {
            guard let code = totpCode, !code.allSatisfy(\.isWhitespace) else { throw ConsoleError.totpRequired }
            guard let matched = TOTP(secret: secret).verify(code, at: now, after: record.totpLastStep) else {
                throw await failed(.invalidTOTP, email: normalized, clientAddress: clientAddress, limits: limits)
            }
            step = matched
        }
        let now = now
        let token = Self.newToken()
        let session = OperatorSessionRecord(
            id: TimeOrderedID.make(prefix: "ops_", now: Date(timeIntervalSince1970: TimeInterval(now))),
            operatorID: record.id, tokenHash: OpaqueToken.sha256(token), csrfToken: Self.newToken(), createdAt: now,
            lastSeenAt: now, expiresAt: now + Self.absoluteSeconds)
        // Opened only while the operator still has the password just verified, on its locked row: a
        // reset or a removal since the read above refuses it, as a wrong password would; a step
        // another login used meanwhile (another node) as a wrong code.
        switch try await mapped({ try await store.logInOperator(session: session, passwordHash: hash, totpStep: step) })
        {
        case .signedIn: break
        case .unknownOperator, .passwordChanged:
            throw await failed(.invalidLogin, email: normalized, clientAddress: clientAddress, limits: limits)
        case .totpStepUsed:
            throw await failed(.invalidTOTP, email: normalized, clientAddress: clientAddress, limits: limits)
        }
        logger.notice("console sign-in", metadata: ["operator": "\(record.id)", "address": "\(clientAddress)"])
        await audit(.signedIn, email: record.email, clientAddress: clientAddress)
        return (session, token)
    }

    /// The sign-in counters of an email typed from a client address: the address, and the pair.
    static func signInLimits(email: String, clientAddress: String) -> [(key: RateLimitKey, limit: Int64)] {
        [
            (
                key: RateLimitKey(projectID: "", bucket: .consoleLoginByAddress, key: clientAddress),
                limit: failuresPerAddress
            ),
            (
                key: RateLimitKey(
                    projectID: "", bucket: .consoleLoginByEmailAndAddress, key: email + " " + clientAddress),
                limit: failuresPerEmail
            ),
        ]
    }

    /// Counts a failed sign-in on both counters, logs and audits it, and answers what to throw:
    /// `failure`, or `locked` once a counter reached its limit (audited once, as `operator.locked`).
    private func failed(
        _ failure: ConsoleError, email: String, clientAddress: String, limits: [(key: RateLimitKey, limit: Int64)]
    ) async -> ConsoleError {
        let now = now
        let window = RateLimitWindow(containing: now, seconds: Self.failureWindowSeconds)
        logger.notice(
            "console sign-in failed",
            metadata: ["email": "\(email)", "address": "\(clientAddress)", "code": "\(failure.code.rawValue)"])
        await audit(.signInFailed, email: email, clientAddress: clientAddress, detail: failure.code.rawValue)
        // When the database cannot count, the attempt's own answer stands.
        guard let hits = try? await store.hitRateLimits(limits.map(\.key), window: window) else { return failure }
        // The failure that reaches a limit is still answered as itself; the attempts after it are refused.
        guard let refusal = Self.refusal(limits: limits, counts: hits.map { $0 - 1 }, window: window, now: now) else {
            if zip(limits, hits).contains(where: { $1 == $0.limit && $0.key.bucket == .consoleLoginByEmailAndAddress })
            {
                let until = Self.clockTime(window.end)
                logger.notice(
                    "console sign-in locked",
                    metadata: ["email": "\(email)", "address": "\(clientAddress)", "until": "\(until)"])
                await audit(.locked, email: email, clientAddress: clientAddress, detail: "until \(until)")
            }
            return failure
        }
        return refusal
    }

    /// What counters at or past their limits refuse: `locked` (until the window ends) for the email
    /// from this address, `rateLimited` for the address as a whole; nil below both limits.
    static func refusal(
        limits: [(key: RateLimitKey, limit: Int64)], counts: [Int64], window: RateLimitWindow, now: Int64
    ) -> ConsoleError? {
        let reached = zip(limits, counts).filter { $1 >= $0.limit }.map(\.0.key.bucket)
        if reached.contains(.consoleLoginByEmailAndAddress) {
            return .locked(until: window.end, retryAfter: window.retryAfter(now: now))
        }
        return reached.isEmpty ? nil : .rateLimited(retryAfter: window.retryAfter(now: now))
    }

    /// What a password given with a destructive action came to.
    public enum Reauthentication: Sendable, Hashable {
        /// The right password.
        case accepted
        /// A wrong one; this many more are allowed before the console session ends.
        case wrong(remaining: Int64)
        /// Too many wrong ones: the console session was ended (sign in again; the right password works).
        case signedOut
    }

    /// Checks the password a destructive console action came with (fresh re-authentication).
    ///
    /// A right password is always accepted. Wrong ones count against the operator
    /// (``failuresPerOperatorAction`` per window); the one that reaches the limit ends the console
    /// session it came from and resets the count, so a stolen cookie gets that many guesses and no
    /// more, while the operator, who knows the password, simply signs in again. Sign-in is never
    /// locked by it.
    public func reauthenticate(
        _ record: OperatorRecord, password: String, sessionID: String, clientAddress: String
    ) async throws -> Reauthentication {
        guard let hash = record.passwordHash else {
            await hasher.verifyDummy(password)
            return .wrong(remaining: 0)
        }
        if await hasher.verify(password, hash: hash) { return .accepted }
        let key = RateLimitKey(projectID: "", bucket: .consoleReauthentication, key: record.id)
        let window = RateLimitWindow(containing: now, seconds: Self.failureWindowSeconds)
        let hits = try await mapped { try await store.hitRateLimits([key], window: window) }.first ?? 1
        logger.notice(
            "console action password wrong", metadata: ["operator": "\(record.id)", "address": "\(clientAddress)"])
        await audit(.passwordFailed, email: record.email, clientAddress: clientAddress)
        guard hits >= Self.failuresPerOperatorAction else {
            return .wrong(remaining: Self.failuresPerOperatorAction - hits)
        }
        try await mapped { try await store.deleteOperatorSession(id: sessionID) }
        _ = try await mapped {
            try await store.clearRateLimits(projectID: "", bucket: .consoleReauthentication, key: record.id)
        }
        logger.notice(
            "console session ended after wrong passwords",
            metadata: ["operator": "\(record.id)", "address": "\(clientAddress)"])
        await audit(
            .locked, email: record.email, clientAddress: clientAddress,
            detail: "\(Self.failuresPerOperatorAction) wrong passwords at actions: signed out")
        return .signedOut
    }

    /// Whether `password` is the operator's, without counting anything (tests and tools).
    public func verifyPassword(_ record: OperatorRecord, _ password: String) async -> Bool {
        guard let hash = record.passwordHash else {
            await hasher.verifyDummy(password)
            return false
        }
        return await hasher.verify(password, hash: hash)
    }

    /// Clears every failed-sign-in count of an email, from every address, so its operator can sign in
    /// at once; `operatorNotFound` when no operator has the email. Logged and audited, with the owner
    /// who did it (nil: the command line).
    public func unlock(email: String, actorEmail: String?, clientAddress: String?) async throws {
        let email = try Self.normalized(email: email)
        guard try await mapped({ try await store.operatorRecord(email: email) }) != nil else {
            throw ConsoleError.operatorNotFound
        }
        try await mapped {
            try await store.clearRateLimits(projectID: "", bucket: .consoleLoginByEmailAndAddress, key: email)
            try await store.clearRateLimits(projectID: "", bucket: .consoleLoginByEmail, key: email)
        }
        logger.notice(
            "console sign-in unlocked", metadata: ["email": "\(email)", "by": "\(actorEmail ?? "command line")"])
        await audit(.unlocked, email: email, actorEmail: actorEmail, clientAddress: clientAddress)
    }

    /// Adds an entry to the audit of operator accounts; a database failure is logged, not thrown (the
    /// action it records has happened).
    func audit(
        _ kind: OperatorAuditRecord.Kind, email: String, actorEmail: String? = nil, clientAddress: String? = nil,
        detail: String? = nil
    ) async {
        let date = clock()
        // The ID orders the entries: by the wall clock's milliseconds, which move even when a test's
        // clock stands still.
        let entry = OperatorAuditRecord(
            id: TimeOrderedID.make(prefix: "oau_"), kind: kind, operatorEmail: email,
            actorEmail: actorEmail, clientAddress: clientAddress, detail: detail,
            createdAt: Int64(date.timeIntervalSince1970.rounded(.down)))
        do {
            try await store.appendOperatorAudit(entry)
        } catch {
            logger.error("operator audit not written", metadata: ["type": "\(kind.rawValue)"])
        }
    }

    /// `HH:MM UTC` of a Unix time.
    static func clockTime(_ seconds: Int64) -> String {
        let minutes = (seconds % 86_400 + 86_400) % 86_400 / 60
        return String(format: "%02d:%02d UTC", Int(minutes / 60), Int(minutes % 60))
    }

    // MARK: Sessions

    /// The live session of a cookie's token, with its operator; nil when unknown or expired (idle
    /// or absolute). Moves `lastSeenAt` forward, at most once per ``touchSeconds``.
    public func session(token: String) async throws -> (OperatorSessionRecord, OperatorRecord)? {
        let now = now
        guard
            let found = try await mapped({
                try await store.operatorSession(tokenHash: OpaqueToken.sha256(token), now: now)
            })
        else { return nil }
        var (session, record) = found
        if now - session.lastSeenAt >= Self.touchSeconds {
            try await mapped { try await store.touchOperatorSession(id: session.id, lastSeenAt: now) }
            session.lastSeenAt = now
        }
        return (session, record)
    }

    /// Ends a console session.
    public func logOut(sessionID: String) async throws {
        try await mapped { try await store.deleteOperatorSession(id: sessionID) }
    }

    // MARK: Rules

    /// The email lowercased and trimmed; `invalidEmail` unless it looks like `local@domain`.
    public static func normalized(email: String) throws(ConsoleError) -> String {
        let email = email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard email.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
            !email.contains(where: { $0.isWhitespace || $0.isNewline || $0.asciiValue.map { $0 < 0x20 } == true })
        else { throw .invalidEmail }
        return email
    }

    /// Throws `weakPassword` unless the password has 12 to 128 characters.
    public static func checkPassword(_ password: String) throws(ConsoleError) {
        if password.count < passwordLengths.lowerBound {
            throw .weakPassword("A password has at least \(passwordLengths.lowerBound) characters.")
        }
        if password.count > passwordLengths.upperBound {
            throw .weakPassword("A password has at most \(passwordLengths.upperBound) characters.")
        }
    }

    /// The enrollment link of a token: `base` (the console's origin, with any path prefix) then
    /// `/console/enroll?token=TOKEN`.
    public static func enrollmentLink(base: String, token: String) -> String {
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        return base + "/console/enroll?token=" + token
    }

    /// 32 random bytes in base64url: an enrollment, session or CSRF token.
    static func newToken() -> String { OpaqueToken.generate(prefix: "", byteCount: 32) }

    /// Runs a store call; the store's own failures become ``ConsoleError`` where the console has one.
    private func mapped<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as CoreError where error.code == .operatorExists {
            throw ConsoleError.operatorExists
        } catch let error as CoreError where error.code == ErrorCode.serviceUnavailable {
            throw ConsoleError.unavailable(retryAfter: error.retryAfterSeconds ?? 1)
        }
    }
}

/// A TOTP secret an operator adds at enrollment, with a code of their app that proves it was
/// scanned right.
public struct TOTPEnrollment: Sendable, Hashable {
    public var secret: [UInt8]
    public var code: String

    public init(secret: [UInt8], code: String) {
        self.secret = secret
        self.code = code
    }
}
