import ArgumentParser
import Logging
import TesseraServer

/// The options of `tessera serve`, also checked by `tessera config check`.
struct ServeOptions: ParsableArguments {
    @OptionGroup var store: StoreOptions

    @Option(help: "The address to listen on (default 127.0.0.1).")
    var host: String?

    @Option(help: "The port to listen on (default 8080).")
    var port: Int?

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

    @Flag(help: "Allow http webhook URLs and loopback or private addresses (development and tests only).")
    var allowInsecureWebhooks = false

    @Option(help: "Serve the operator console at /console/: on or off (default on; TESSERA_CONSOLE).")
    var console: String?

    @Option(help: "Delete events older than this many days from the feed; 0 keeps them (default 30).")
    var eventRetentionDays: Int64?

    @Option(
        help:
            "On SIGTERM or SIGINT, keep serving this many seconds while /health/ready answers 503, so load balancers stop sending before the listener closes (0 to 300, default 5; TESSERA_DRAIN_SECONDS)."
    )
    var drainSeconds: Int64?

    @Flag(
        inversion: .prefixedNo,
        help: "Run Swift concurrency on the server's event loops (default; TESSERA_EVENT_LOOP_EXECUTOR=0 turns it off)."
    )
    var eventLoopExecutor = true

    /// The configuration `serve` runs with: the environment's, with these flags applied.
    func configuration() throws -> ServerConfiguration {
        var configuration = try store.configuration(creating: true)
        if let host { configuration.host = host }
        if let port {
            guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
            configuration.port = port
        }
        if let logLevel {
            guard let level = Logger.Level(rawValue: logLevel.lowercased()) else {
                throw ValidationError("--log-level must be trace, debug, info, notice, warning, error or critical")
            }
            configuration.logLevel = level
        }
        if let publicURL { configuration.publicURL = publicURL }
        if allowInsecureWebhooks { configuration.allowInsecureWebhooks = true }
        switch console?.lowercased() {
        case nil: break
        case "on": configuration.consoleEnabled = true
        case "off": configuration.consoleEnabled = false
        default: throw ValidationError("--console must be on or off")
        }
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
            if let drainSeconds {
                configuration.drainDelay = try ServerConfiguration.validatedDrainDelay(
                    String(drainSeconds), name: "--drain-seconds")
            }
            if let eventRetentionDays {
                configuration.eventRetentionDays = try ServerConfiguration.validatedRetentionDays(
                    String(eventRetentionDays), name: "--event-retention-days")
            }
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
        return configuration
    }
}
