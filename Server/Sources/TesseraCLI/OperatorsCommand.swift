import ArgumentParser
import Foundation
import TesseraServer

/// `tessera operators`: the accounts that sign in to the console.
struct OperatorsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "operators",
        abstract: "Manage the operators of the console: create, list, remove, new enrollment link.",
        subcommands: [Create.self, List.self, Remove.self, Link.self, Unlock.self]
    )

    /// The console's address, for enrollment links.
    struct ConsoleURLOption: ParsableArguments {
        @Option(
            name: [.customLong("console-url"), .customLong("public-url")],
            help: ArgumentHelp(
                "The address operators reach the server at, for the enrollment link (default: TESSERA_PUBLIC_URL, else http://HOST:PORT of `serve`'s defaults and environment: http://127.0.0.1:8080).",
                valueName: "url"))
        var consoleURL: String?

        /// `--console-url` (or `--public-url`), else the configuration's public URL, else
        /// `http://HOST:PORT` of the configuration (a wildcard host as loopback).
        func base(_ configuration: ServerConfiguration) throws -> String {
            if let consoleURL = consoleURL ?? configuration.publicURL {
                guard let url = URL(string: consoleURL), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                    url.host != nil
                else { throw ValidationError("--console-url must be an http:// or https:// URL") }
                return consoleURL
            }
            var host = configuration.host
            if host == "0.0.0.0" || host == "::" || host.isEmpty { host = "127.0.0.1" }
            if host.contains(":") { host = "[\(host)]" }
            return "http://\(host):\(configuration.port)"
        }
    }

    /// Prints an enrollment link and how long it works.
    static func printLink(email: String, base: String, token: String) {
        print(
            "Enrollment link for \(email) (expires in \(OperatorAccounts.enrollmentSeconds / 60) minutes, works once):")
        print(OperatorAccounts.enrollmentLink(base: base, token: token))
    }

    /// `tessera operators create --email E --role R [--console-url URL]`
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an operator and print a one-time enrollment link (valid 15 minutes).",
            discussion:
                "The operator opens the link to set a password and, optionally, TOTP. The link is BASE/console/enroll?token=TOKEN, where BASE is --console-url or, by default, http://127.0.0.1:8080 (the host and port `serve` would use)."
        )

        @Option(help: "The operator's email (the login name).")
        var email: String

        @Option(help: "owner, admin, support or viewer.")
        var role: String

        @OptionGroup var console: ConsoleURLOption

        @OptionGroup var store: StoreOptions

        func validate() throws {
            guard OperatorRole(rawValue: role.lowercased()) != nil else {
                throw ValidationError("--role must be one of owner, admin, support, viewer")
            }
        }

        func run() async throws {
            let configuration = try store.configuration()
            let base = try console.base(configuration)
            let parsedRole = OperatorRole(rawValue: role.lowercased()) ?? .viewer
            let (record, token) = try await OperatorsCommand.withAccounts(configuration) { accounts in
                try await accounts.create(email: email, role: parsedRole)
            }
            print("Created operator \(record.email) (\(record.role.rawValue), \(record.id)).")
            OperatorsCommand.printLink(email: record.email, base: base, token: token)
        }
    }

    /// `tessera operators list [--json]`
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the operators: email, role, enrolled, TOTP, last login.")

        @Flag(help: "Print JSON.")
        var json = false

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let operators = try await OperatorsCommand.withAccounts(try store.configuration()) {
                try await $0.operators()
            }
            print(json ? Self.json(operators) : Self.table(operators))
        }

        static func time(_ seconds: Int64?) -> String {
            guard let seconds else { return "never" }
            let formatter = ISO8601DateFormatter()
            formatter.timeZone = TimeZone(identifier: "UTC")
            return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        }

        static func json(_ operators: [OperatorRecord]) -> String {
            let objects: [[String: Any]] = operators.map {
                [
                    "id": $0.id, "email": $0.email, "role": $0.role.rawValue, "enrolled": $0.isEnrolled,
                    "totp": $0.totpSecret != nil,
                    "last_login_at": $0.lastLoginAt.map { time($0) as Any } ?? NSNull() as Any,
                ]
            }
            let data = try? JSONSerialization.data(
                withJSONObject: ["operators": objects], options: [.sortedKeys, .withoutEscapingSlashes])
            return String(decoding: data ?? Data(), as: UTF8.self)
        }

        static func table(_ operators: [OperatorRecord]) -> String {
            let rows =
                [["EMAIL", "ROLE", "ENROLLED", "TOTP", "LAST LOGIN"]]
                + operators.map {
                    [
                        $0.email, $0.role.rawValue, $0.isEnrolled ? "yes" : "no", $0.totpSecret != nil ? "yes" : "no",
                        time($0.lastLoginAt),
                    ]
                }
            let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
            return rows.map { row in
                row.enumerated().map { index, cell in
                    index == 4 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                }.joined(separator: "  ")
            }.joined(separator: "\n")
        }
    }

    /// `tessera operators remove --email E`
    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove an operator; their console sessions end at once.")

        @Option(help: "The operator's email.")
        var email: String

        @OptionGroup var store: StoreOptions

        func run() async throws {
            try await OperatorsCommand.withAccounts(try store.configuration()) { accounts in
                guard let record = try await accounts.operatorRecord(email: email),
                    try await accounts.remove(id: record.id)
                else { throw CLIError(description: "There is no operator \(email).") }
                print("Removed operator \(record.email).")
            }
        }
    }

    /// `tessera operators link --email E [--console-url URL]`
    struct Link: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a new enrollment link for an operator (valid 15 minutes): how a password is reset.",
            discussion:
                "Earlier links stop working. The operator's password and TOTP are replaced when they complete the new enrollment, which also ends their console sessions. BASE is --console-url or, by default, http://127.0.0.1:8080."
        )

        @Option(help: "The operator's email.")
        var email: String

        @OptionGroup var console: ConsoleURLOption

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let configuration = try store.configuration()
            let base = try console.base(configuration)
            let (record, token) = try await OperatorsCommand.withAccounts(configuration) { accounts in
                guard let record = try await accounts.operatorRecord(email: email) else {
                    throw CLIError(description: "There is no operator \(email).")
                }
                return (record, try await accounts.newEnrollment(operatorID: record.id))
            }
            OperatorsCommand.printLink(email: record.email, base: base, token: token)
        }
    }

    /// `tessera operators unlock --email E`
    struct Unlock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Clear an operator's failed sign-ins (from every address) so they can sign in at once.",
            discussion:
                "After too many failed sign-ins for an email from one address, sign-in from there is refused for up to 15 minutes. This ends that at once; it is logged and recorded in the audit of operator accounts."
        )

        @Option(help: "The operator's email.")
        var email: String

        @OptionGroup var store: StoreOptions

        func run() async throws {
            try await OperatorsCommand.withAccounts(try store.configuration()) { accounts in
                try await accounts.unlock(email: email, actorEmail: nil, clientAddress: nil)
            }
            print("\(email.lowercased()) can sign in again.")
        }
    }

    /// Opens the store as the other commands do and runs `body` with the operator accounts; a
    /// ``ConsoleError`` is reported as `Error: …`.
    static func withAccounts<T>(
        _ configuration: ServerConfiguration, _ body: (OperatorAccounts) async throws -> T
    ) async throws -> T {
        try await CLIStore.with(configuration) { store in
            try await body(OperatorAccounts(store: store, now: configuration.now))
        }
    }
}
