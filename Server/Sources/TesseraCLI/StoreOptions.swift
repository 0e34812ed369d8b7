import ArgumentParser
import Foundation
import TesseraServer

/// The options that name the database and its master keys, shared by every command that opens it.
struct StoreOptions: ParsableArguments {
    @Option(help: "sqlite:PATH (default sqlite:.tessera/tessera.sqlite) or postgres://…")
    var database: String?

    @Option(
        help:
            "The master key file (32 random bytes, raw or base64url) that seals the secrets in the database (default: master.key beside an SQLite database, created on first start; required with PostgreSQL)."
    )
    var masterKeyFile: String?

    @Option(
        help: "An older master key file that only opens values, while `tessera keys rewrap` runs (repeatable).")
    var previousMasterKeyFile: [String] = []

    @Flag(help: "Create the database when there is none yet (only `serve` does so without being asked).")
    var create = false

    /// Applies these options over `configuration` (which holds the environment's).
    func apply(to configuration: inout ServerConfiguration) throws {
        do {
            if let database { configuration.database = try DatabaseURL(database) }
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
        if let masterKeyFile { configuration.masterKeyFile = masterKeyFile }
        if !previousMasterKeyFile.isEmpty { configuration.previousMasterKeyFiles = previousMasterKeyFile }
    }

    /// The configuration of the environment with these options applied. Unless `creating` (or
    /// `--create`), an SQLite database that does not exist is refused: a command run from the wrong
    /// directory must not make a second, empty deployment beside the real one.
    func configuration(creating: Bool = false) throws -> ServerConfiguration {
        var configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration.fromEnvironment()
        } catch let error as ConfigurationError {
            throw CLIError(description: error.description)
        }
        try apply(to: &configuration)
        if !creating, !create, case .sqlite(let path) = configuration.database, path != ":memory:",
            !FileManager.default.fileExists(atPath: path)
        {
            throw CLIError(
                description:
                    "There is no database at \(path). Run the command where `tessera serve` runs, pass --database, or pass --create to make a new one."
            )
        }
        return configuration
    }
}
