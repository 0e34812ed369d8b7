import ArgumentParser
import Foundation
import TesseraServer

/// `tessera projects`: manages projects.
struct ProjectsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "projects",
        abstract: "Manage projects.",
        subcommands: [Create.self, List.self, RotateKey.self]
    )

    /// `tessera projects create --name NAME [--slug SLUG] [--json]`
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a project and print its ID, keys and first identity secret (shown once).")

        @Option(help: "The project's name.")
        var name: String

        @Option(help: "A URL-safe name: a-z, 0-9 and -, derived from the name by default.")
        var slug: String?

        @Flag(help: "Print JSON.")
        var json = false

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let project = try await CLIStore.with(try store.configuration()) { store in
                try await ProjectProvisioner.create(name: name, slug: slug, store: store)
            }
            print(json ? project.json : project.text)
        }
    }

    /// `tessera projects rotate-key --project P --kind secret|publishable [--grace-seconds N]`
    struct RotateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-key",
            abstract: "Make a new secret (or publishable) key for a project and print it once.",
            discussion:
                "The break-glass for a lost or leaked secret key, on the server's machine: no old key is needed. The old key stops working after --grace-seconds (default 0: at once). Recorded in the project's audit log with the command line as its actor. A running server picks the new key up within its project cache's lifetime."
        )

        @Option(help: "The project's ID or slug (tessera projects list).")
        var project: String

        @Option(help: "secret or publishable.")
        var kind: String

        @Option(help: "How long the old key keeps working, in seconds (0 to 2592000).")
        var graceSeconds: Int64 = 0

        @OptionGroup var store: StoreOptions

        func run() async throws {
            guard let kind = APIKeyKind(rawValue: kind) else {
                throw ValidationError("--kind is secret or publishable")
            }
            let rotated = try await CLIStore.with(try store.configuration()) { store in
                try await ProjectProvisioner.rotateKey(
                    project: project, kind: kind, graceSeconds: graceSeconds, store: store)
            }
            print("New \(kind.rawValue) key of \(rotated.project.slug) (\(rotated.project.id)), shown once:")
            print(rotated.key)
        }
    }

    /// `tessera projects list [--json]`
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the projects: ID, name, slug, creation time.")

        @Flag(help: "Print JSON.")
        var json = false

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let projects = try await CLIStore.with(try store.configuration()) { try await $0.allProjects() }
            print(json ? Self.json(projects) : Self.table(projects))
        }

        static func created(_ project: ProjectRecord) -> String {
            let formatter = ISO8601DateFormatter()
            formatter.timeZone = TimeZone(identifier: "UTC")
            return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(project.createdAt)))
        }

        static func json(_ projects: [ProjectRecord]) -> String {
            let objects = projects.map {
                ["id": $0.id, "name": $0.name, "slug": $0.slug, "created_at": created($0)]
            }
            let data = try? JSONSerialization.data(
                withJSONObject: ["projects": objects], options: [.sortedKeys, .withoutEscapingSlashes])
            return String(decoding: data ?? Data(), as: UTF8.self)
        }

        static func table(_ projects: [ProjectRecord]) -> String {
            let rows = [["ID", "NAME", "SLUG", "CREATED"]] + projects.map { [$0.id, $0.name, $0.slug, created($0)] }
            let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
            return rows.map { row in
                row.enumerated().map { index, cell in
                    index == 3 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                }.joined(separator: "  ")
            }.joined(separator: "\n")
        }
    }
}

/// A failure reported as `Error: …`, without the usage text.
struct CLIError: Error, CustomStringConvertible {
    var description: String

    /// `error` as the command reports it: the server's refusals (a domain error, a master key, the
    /// configuration, a migration, the console's accounts) as `Error: …` lines, anything else as it is.
    static func reporting(_ error: any Error) -> any Error {
        switch error {
        case let error as CoreError: CLIError(description: error.message)
        case let error as ConsoleError: CLIError(description: error.message)
        case let error as MasterKeyError: CLIError(description: error.description)
        case let error as ConfigurationError: CLIError(description: error.description)
        case let error as MigrationError: CLIError(description: error.description)
        default: error
        }
    }
}
