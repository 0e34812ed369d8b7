import ArgumentParser
import Foundation
import TesseraServer

/// `tessera projects`: manages projects.
struct ProjectsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "projects",
        abstract: "Manage projects.",
        subcommands: [Create.self, List.self]
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
}
