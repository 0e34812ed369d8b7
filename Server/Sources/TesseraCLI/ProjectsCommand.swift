import ArgumentParser
import TesseraServer

/// `tessera projects`: manages projects.
struct ProjectsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "projects",
        abstract: "Manage projects.",
        subcommands: [Create.self]
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

        @Option(
            help: "sqlite:PATH or postgres://… (default from TESSERA_DATABASE_URL, else sqlite:.tessera/tessera.sqlite)"
        )
        var database: String?

        func run() async throws {
            var configuration = try ServerConfiguration.fromEnvironment()
            if let database { configuration.database = try DatabaseURL(database) }
            let store = try configuration.database.makeStore()
            do {
                try await store.migrate()
                let project = try await ProjectProvisioner.create(name: name, slug: slug, store: store)
                print(json ? project.json : project.text)
                try await store.close()
            } catch let error as APIError {
                try? await store.close()
                throw CLIError(description: error.message)
            } catch {
                try? await store.close()
                throw error
            }
        }
    }
}

/// A failure reported as `Error: …`, without the usage text.
struct CLIError: Error, CustomStringConvertible {
    var description: String
}
