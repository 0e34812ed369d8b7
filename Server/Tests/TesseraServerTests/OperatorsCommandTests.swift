import Foundation
import Testing

@testable import TesseraServer

@Suite("tessera operators")
struct OperatorsCommandTests {
    /// The token of the enrollment link a command printed.
    static func token(in output: String) -> String? {
        output.split(separator: "\n").first { $0.contains("/console/enroll?token=") }
            .flatMap { $0.components(separatedBy: "token=").last }
    }

    @Test(
        "create prints a 15-minute link that enrolls; list, link and remove act on the database",
        .enabled(if: TesseraExecutable.path != nil))
    func commands() async throws {
        let directory = try newTemporaryDirectory("ops")
        let (database, keyFile) = (directory + "/t.sqlite", directory + "/master.key")
        let key = MasterKey.generate()
        try key.write(toNewFile: keyFile)
        let store = ["--database", "sqlite:\(database)", "--master-key-file", keyFile]

        let created = try await TesseraExecutable.run(
            ["operators", "create", "--email", "Owner@Example.com", "--role", "owner", "--create"] + store)
        #expect(created.status == 0, "\(created.errors)")
        #expect(created.output.contains("http://127.0.0.1:8080/console/enroll?token="))
        #expect(created.output.contains("expires in 15 minutes"))
        let token = try #require(Self.token(in: created.output))

        let custom = try await TesseraExecutable.run(
            [
                "operators", "create", "--email", "viewer@example.com", "--role", "viewer", "--console-url",
                "https://ops.example.com/auth/",
            ] + store)
        #expect(custom.output.contains("https://ops.example.com/auth/console/enroll?token="))
        // --public-url is --console-url's other name; TESSERA_PUBLIC_URL is the default before HOST:PORT.
        let alias = try await TesseraExecutable.run(
            ["operators", "link", "--email", "viewer@example.com", "--public-url", "https://alias.example.com"] + store)
        #expect(alias.output.contains("https://alias.example.com/console/enroll?token="), "\(alias.errors)")
        let fromEnvironment = try await TesseraExecutable.run(
            ["operators", "link", "--email", "viewer@example.com"] + store,
            environment: ["TESSERA_PUBLIC_URL": "https://env.example.com"])
        #expect(fromEnvironment.output.contains("https://env.example.com/console/enroll?token="))
        let duplicate = try await TesseraExecutable.run(
            ["operators", "create", "--email", "owner@example.com", "--role", "admin"] + store)
        #expect(duplicate.status != 0)
        #expect(duplicate.errors.contains("already exists"))
        let badRole = try await TesseraExecutable.run(
            ["operators", "create", "--email", "x@example.com", "--role", "root"] + store)
        #expect(badRole.status != 0)
        let help = try await TesseraExecutable.run(["operators", "create", "--help"])
        #expect(help.output.contains("http://127.0.0.1:8080"))

        // The link enrolls the operator in the database the command wrote.
        let opened = try SQLiteStore(path: database, masterKeys: MasterKeyring(current: key))
        let accounts = OperatorAccounts(store: opened, bcryptCost: 4)
        #expect(try await accounts.enrollment(token: token)?.email == "owner@example.com")
        _ = try await accounts.enroll(token: token, password: "a long enough password", totp: nil)
        try await opened.close()

        let list = try await TesseraExecutable.run(["operators", "list"] + store)
        #expect(list.status == 0)
        let lines = list.output.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(lines.first?.first == "EMAIL")
        #expect(
            lines.dropFirst().map { Array($0.prefix(4)) } == [
                ["owner@example.com", "owner", "yes", "no"], ["viewer@example.com", "viewer", "no", "no"],
            ])
        let json = try await TesseraExecutable.run(["operators", "list", "--json"] + store)
        #expect(json.output.contains("\"email\":\"owner@example.com\""))

        let link = try await TesseraExecutable.run(["operators", "link", "--email", "owner@example.com"] + store)
        #expect(link.status == 0)
        let newToken = try #require(Self.token(in: link.output))
        #expect(newToken != token)
        let unknown = try await TesseraExecutable.run(["operators", "link", "--email", "nobody@example.com"] + store)
        #expect(unknown.status != 0)

        let unlocked = try await TesseraExecutable.run(["operators", "unlock", "--email", "Owner@example.com"] + store)
        #expect(unlocked.status == 0, "\(unlocked.errors)")
        #expect(unlocked.output.contains("owner@example.com can sign in again"))
        let unlockUnknown = try await TesseraExecutable.run(
            ["operators", "unlock", "--email", "nobody@example.com"] + store)
        #expect(unlockUnknown.status != 0)
        let removed = try await TesseraExecutable.run(["operators", "remove", "--email", "viewer@example.com"] + store)
        #expect(removed.status == 0)
        let again = try await TesseraExecutable.run(["operators", "remove", "--email", "viewer@example.com"] + store)
        #expect(again.status != 0)

        let check = try SQLiteStore(path: database, masterKeys: MasterKeyring(current: key))
        #expect(try await check.operators().map(\.email) == ["owner@example.com"])
        // The command line's invitations and removal are in the audit of operator accounts, no owner named.
        let audit = try await check.operatorAudit(before: nil, limit: 50)
        #expect(
            Set(audit.filter { $0.kind == .invited && $0.actorEmail == nil }.map(\.operatorEmail)) == [
                "owner@example.com", "viewer@example.com",
            ])
        #expect(audit.filter { $0.kind == .removed }.map(\.operatorEmail) == ["viewer@example.com"])
        #expect(try await OperatorAccounts(store: check).enrollment(token: newToken)?.email == "owner@example.com")
        try await check.close()
    }
}
