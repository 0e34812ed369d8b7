import ArgumentParser
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

    /// The configuration of the environment with these options applied.
    func configuration() throws -> ServerConfiguration {
        var configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration.fromEnvironment()
        } catch let error as ConfigurationError {
            throw CLIError(description: error.description)
        }
        try apply(to: &configuration)
        return configuration
    }
}
