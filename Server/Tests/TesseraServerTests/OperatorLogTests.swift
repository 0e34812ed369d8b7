import Foundation
import Logging
import Synchronization
import Testing

@testable import TesseraServer

/// A log handler that keeps every line it is given (level, message, metadata), for tests that
/// check what is logged.
final class CapturedLog: Sendable {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let storage = Mutex<[Line]>([])

    var lines: [Line] { storage.withLock { $0 } }

    /// A logger (at `trace`) whose lines land here.
    func logger(label: String = "test") -> Logger {
        Logger(label: label) { _ in Handler(log: self) }
    }

    fileprivate func append(_ line: Line) { storage.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            log.append(
                Line(
                    level: event.level, message: event.message.description,
                    metadata: all.mapValues { "\($0)" }))
        }
    }
}

/// The operator accounts' notice lines: a failed sign-in, the lock it reaches, the unlock; none
/// carries the password or the code tried.
@Suite("Operator accounts: notice logs")
struct OperatorLogTests {
    /// A store of the selected backend and its operator accounts, logging into a ``CapturedLog``.
    static func accounts() async throws -> (TestEnvironment, CapturedLog, OperatorAccounts) {
        let environment = try await TestEnvironment.make()
        let log = CapturedLog()
        let accounts = OperatorAccounts(
            store: environment.store, now: { environment.clock.now }, bcryptCost: 4, logger: log.logger())
        return (environment, log, accounts)
    }

    @Test("Sign-in failures, the lock and the unlock are notices without the password or code")
    func notices() async throws {
        let (_, log, accounts) = try await Self.accounts()
        let (_, token) = try await accounts.create(email: "Ops@Example.com", role: .owner)
        _ = try await accounts.enroll(token: token, password: "correct horse battery", totp: nil)
        let wrong = "wrong-password-\(UUID().uuidString)"
        for _ in 0..<OperatorAccounts.failuresPerEmail {
            await #expect(throws: ConsoleError.self) {
                try await accounts.logIn(
                    email: "ops@example.com", password: wrong, totpCode: "123456", clientAddress: "192.0.2.9")
            }
        }
        try await accounts.unlock(email: "ops@example.com", actorEmail: nil, clientAddress: nil)
        let lines = log.lines
        let failed = lines.filter { $0.message == "console sign-in failed" }
        #expect(failed.count == Int(OperatorAccounts.failuresPerEmail))
        #expect(failed.allSatisfy { $0.level == .notice && $0.metadata["email"] == "ops@example.com" })
        #expect(failed.allSatisfy { $0.metadata["address"] == "192.0.2.9" })
        let locked = lines.filter { $0.message == "console sign-in locked" }
        #expect(locked.count == 1 && locked.first?.level == .notice && locked.first?.metadata["until"] != nil)
        let unlocked = lines.filter { $0.message == "console sign-in unlocked" }
        #expect(unlocked.count == 1 && unlocked.first?.metadata["by"] == "command line")
        // No line carries the password or the code tried.
        for line in lines {
            let text = ([line.message] + line.metadata.values).joined(separator: " ")
            #expect(!text.contains(wrong) && !text.contains("123456") && !text.contains("correct horse"), "\(line)")
        }
        // After the unlock, the right password signs in.
        _ = try await accounts.logIn(
            email: "ops@example.com", password: "correct horse battery", totpCode: nil, clientAddress: "192.0.2.9")
        #expect(log.lines.contains { $0.message == "console sign-in" && $0.level == .notice })
    }

    @Test("Operators created and removed from the command line (no actor) are logged and audited as the console's are")
    func commandLineAccounts() async throws {
        let (environment, log, accounts) = try await Self.accounts()
        let (record, _) = try await accounts.create(email: "cli@example.com", role: .viewer)
        #expect(try await accounts.remove(id: record.id))
        #expect(!(try await accounts.remove(id: record.id)), "removing again finds nobody, audits nothing")
        let (byOwner, _) = try await accounts.create(
            email: "owned@example.com", role: .admin, actorID: "opr_owner", actorEmail: "owner@example.com",
            clientAddress: "192.0.2.1")
        let audit = try await environment.store.operatorAudit(before: nil, limit: 10)
        let created = audit.filter { $0.kind == .invited }
        #expect(
            created.contains {
                $0.operatorEmail == "cli@example.com" && $0.actorEmail == nil && $0.detail == "role viewer"
            })
        #expect(
            created.contains {
                $0.operatorEmail == "owned@example.com" && $0.actorEmail == "owner@example.com"
                    && $0.clientAddress == "192.0.2.1"
            })
        #expect(audit.filter { $0.kind == .removed }.map(\.operatorEmail) == ["cli@example.com"])
        let lines = log.lines.filter { $0.level == .notice }
        #expect(
            lines.contains {
                $0.message == "operator invited" && $0.metadata["operator"] == record.id
                    && $0.metadata["by"] == "command line"
            })
        #expect(
            lines.contains {
                $0.message == "operator invited" && $0.metadata["operator"] == byOwner.id
                    && $0.metadata["by"] == "opr_owner"
            })
        #expect(lines.filter { $0.message == "operator removed" }.map { $0.metadata["by"] } == ["command line"])
    }
}
