import ArgumentParser
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import TesseraServer

/// `tessera serve`: runs the server until SIGTERM or SIGINT.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the server.",
        discussion:
            "Flags override the TESSERA_HOST, TESSERA_PORT, TESSERA_DATABASE_URL, TESSERA_LOG_LEVEL, TESSERA_PUBLIC_URL, TESSERA_TRUSTED_PROXY_HEADER, TESSERA_FAILED_SESSION_LOOKUPS_PER_MINUTE, TESSERA_ANONYMOUS_RETENTION_DAYS and TESSERA_EVENT_LOOP_EXECUTOR environment variables."
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

    @Option(
        help:
            "A header your reverse proxy appends the client's address to, such as X-Forwarded-For; its right-most address is the client (default: the socket's peer)."
    )
    var trustedProxyHeader: String?

    @Option(
        help: "Session credentials that find no session, per client address per minute; 0 is unlimited (default 120)."
    )
    var failedSessionLookupsPerMinute: Int64?

    @Option(help: "Delete anonymous profiles older than this without a live session; 0 keeps them (default 30).")
    var anonymousRetentionDays: Int64?

    @Flag(
        inversion: .prefixedNo,
        help: "Run Swift concurrency on the server's event loops (default; TESSERA_EVENT_LOOP_EXECUTOR=0 turns it off)."
    )
    var eventLoopExecutor = true

    func run() async throws {
        LoggingSystem.bootstrap { label in TesseraLogHandler(label: label) }
        // Request handlers then run on the event loop that read the request (SwiftNIO's documented
        // take-over of the global executor) instead of hopping to Swift's default thread pool and back
        // for every request. Nothing in the server blocks a thread for long: SQLite writes have a
        // thread of their own and its reads are short indexed lookups.
        if eventLoopExecutor, ProcessInfo.processInfo.environment["TESSERA_EVENT_LOOP_EXECUTOR"] != "0" {
            NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        }
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
        do {
            if let trustedProxyHeader {
                configuration.trustedProxyHeader = try ServerConfiguration.validatedProxyHeader(trustedProxyHeader)
            }
            if let failedSessionLookupsPerMinute {
                configuration.failedSessionLookupsPerMinute = try ServerConfiguration.validatedLimit(
                    String(failedSessionLookupsPerMinute), name: "--failed-session-lookups-per-minute")
            }
            if let anonymousRetentionDays {
                configuration.anonymousRetentionDays = try ServerConfiguration.validatedRetentionDays(
                    String(anonymousRetentionDays), name: "--anonymous-retention-days")
            }
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
        let app = try await buildApplication(configuration: configuration)
        try await app.runService()
    }
}
