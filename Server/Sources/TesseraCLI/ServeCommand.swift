import ArgumentParser
import Hummingbird
import Logging
import TesseraServer

/// `tessera serve`: runs the server until SIGTERM or SIGINT.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the server.",
        discussion:
            "Flags override the TESSERA_HOST, TESSERA_PORT, TESSERA_DATABASE_URL, TESSERA_LOG_LEVEL and TESSERA_PUBLIC_URL environment variables."
    )

    @Option(help: "The address to listen on (default 127.0.0.1).")
    var host: String?

    @Option(help: "The port to listen on (default 8080).")
    var port: Int?

    @Option(help: "sqlite:PATH (default sqlite:.tessera/tessera.sqlite) or postgres://…")
    var database: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical (default info).")
    var logLevel: String?

    @Option(help: "The server's public base URL, the session JWT issuer (default http://HOST:PORT).")
    var publicURL: String?

    func run() async throws {
        var configuration = try ServerConfiguration.fromEnvironment()
        if let host { configuration.host = host }
        if let port {
            guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
            configuration.port = port
        }
        if let database { configuration.database = try DatabaseURL(database) }
        if let logLevel {
            guard let level = Logger.Level(rawValue: logLevel.lowercased()) else {
                throw ValidationError("--log-level must be trace, debug, info, notice, warning, error or critical")
            }
            configuration.logLevel = level
        }
        if let publicURL { configuration.publicURL = publicURL }
        let app = try await buildApplication(configuration: configuration)
        try await app.runService()
    }
}
