import Foundation
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
    /// Failed logins allowed per email in one window.
    public static let failuresPerEmail: Int64 = 10
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

    /// - Parameters:
    ///   - store: where operators, enrollments, sessions and failure counters are kept.
    ///   - now: the clock (tests move it by hand).
    ///   - bcryptCost: bcrypt's log2 rounds; 12 (about 0.2 s) unless a test needs speed.
    public init(store: any TesseraStore, now: @escaping @Sendable () -> Date = { Date() }, bcryptCost: Int = 12) {
        self.store = store
        self.clock = now
        self.hasher = PasswordHasher(cost: UInt8(clamping: bcryptCost))
        self.blocks = RateLimitBlocks()
    }

    /// The current time in Unix seconds.
    var now: Int64 { Int64(clock().timeIntervalSince1970.rounded(.down)) }

    // MARK: Accounts

    /// Creates an operator who is not enrolled yet, with an enrollment token valid for
    /// ``enrollmentSeconds``; `invalidEmail` or `operatorExists`.
    public func create(email: String, role: OperatorRole) async throws -> (OperatorRecord, enrollmentToken: String) {
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

    /// Deletes an operator with its sessions and enrollment links; false when unknown.
    public func remove(id: String) async throws -> Bool {
        try await mapped { try await store.removeOperator(id: id) }
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
        if let totp {
            guard (16...64).contains(totp.secret.count),
                TOTP(secret: totp.secret).verify(totp.code, at: now, after: nil) != nil
            else { throw ConsoleError.invalidTOTP }
        }
        let hash = try await hasher.hash(password)
        guard
            let record = try await mapped({
                try await store.completeEnrollment(
                    tokenHash: tokenHash, passwordHash: hash, totpSecret: totp?.secret, now: now)
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
    /// Failures count against the client address and the email; past a limit every attempt is
    /// `rateLimited` until the window ends.
    public func logIn(email: String, password: String, totpCode: String?, clientAddress: String) async throws
        -> (OperatorSessionRecord, token: String)
    {
        let normalized = (try? Self.normalized(email: email)) ?? email.lowercased()
        let limits = [
            (
                key: RateLimitKey(projectID: "", bucket: .consoleLoginByAddress, key: clientAddress),
                limit: Self.failuresPerAddress
            ),
            (
                key: RateLimitKey(projectID: "", bucket: .consoleLoginByEmail, key: normalized),
                limit: Self.failuresPerEmail
            ),
        ]
        let start = now
        let waits = limits.compactMap { blocks.retryAfter($0.key, limit: $0.limit, now: start) }
        if let wait = waits.max() { throw ConsoleError.rateLimited(retryAfter: wait) }

        let found = try await mapped { try await store.operatorRecord(email: normalized) }
        guard let record = found, let hash = record.passwordHash else {
            await hasher.verifyDummy(password)
            throw await failed(.invalidLogin, limits: limits)
        }
        guard await hasher.verify(password, hash: hash) else {
            throw await failed(.invalidLogin, limits: limits)
        }
        var step: Int64?
        if let secret = record.totpSecret {
            guard let code = totpCode, !code.allSatisfy(\.isWhitespace) else { throw ConsoleError.totpRequired }
            guard let matched = TOTP(secret: secret).verify(code, at: now, after: record.totpLastStep) else {
                throw await failed(.invalidTOTP, limits: limits)
            }
            step = matched
        }
        let now = now
        // The conditional update refuses a step another login used meanwhile (another node).
        guard try await mapped({ try await store.recordOperatorLogin(id: record.id, now: now, totpStep: step) }) else {
            throw await failed(step == nil ? .invalidLogin : .invalidTOTP, limits: limits)
        }
        let token = Self.newToken()
        let session = OperatorSessionRecord(
            id: TimeOrderedID.make(prefix: "ops_", now: Date(timeIntervalSince1970: TimeInterval(now))),
            operatorID: record.id, tokenHash: OpaqueToken.sha256(token), csrfToken: Self.newToken(), createdAt: now,
            lastSeenAt: now, expiresAt: now + Self.absoluteSeconds)
        try await mapped { try await store.createOperatorSession(session) }
        return (session, token)
    }

    /// Counts a failed login on both counters and answers what to throw: `failure`, or
    /// `rateLimited` once a counter passed its limit. A counter at its limit blocks its kind of
    /// login in this process until the window ends.
    private func failed(_ failure: ConsoleError, limits: [(key: RateLimitKey, limit: Int64)]) async -> ConsoleError {
        let now = now
        let window = RateLimitWindow(containing: now, seconds: Self.failureWindowSeconds)
        // When the database cannot count, the attempt's own answer stands.
        guard let hits = try? await store.hitRateLimits(limits.map(\.key), window: window) else { return failure }
        var exceeded = false
        for (entry, count) in zip(limits, hits) where count >= entry.limit {
            blocks.block(entry.key, until: window.end, limit: entry.limit, now: now)
            if count > entry.limit { exceeded = true }
        }
        return exceeded ? .rateLimited(retryAfter: window.retryAfter(now: now)) : failure
    }

    /// Whether `password` is the operator's: the fresh re-authentication that destructive console
    /// actions ask for. A wrong password counts as a failed sign-in of the operator's email, so a
    /// stolen console cookie cannot be used to guess the password faster than the sign-in form can;
    /// past the limit every attempt is refused until the window ends.
    public func verifyPassword(_ record: OperatorRecord, _ password: String) async -> Bool {
        let limits = [
            (
                key: RateLimitKey(projectID: "", bucket: .consoleLoginByEmail, key: record.email),
                limit: Self.failuresPerEmail
            )
        ]
        if blocks.retryAfter(limits[0].key, limit: limits[0].limit, now: now) != nil { return false }
        guard let hash = record.passwordHash else {
            await hasher.verifyDummy(password)
            return false
        }
        guard await hasher.verify(password, hash: hash) else {
            _ = await failed(.invalidLogin, limits: limits)
            return false
        }
        return true
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
