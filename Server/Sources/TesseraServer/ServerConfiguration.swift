public import Foundation
public import Logging
public import X509

/// Everything `buildApplication(configuration:)` needs, with a default for every field.
public struct ServerConfiguration: Sendable {
    /// The address to listen on.
    public var host = "127.0.0.1"
    /// The port to listen on (0 picks a free one).
    public var port = 8080
    /// Where the data lives.
    public var database = DatabaseURL.sqlite(path: ".tessera/tessera.sqlite")
    /// The server's public base URL, used as the session JWT `iss`; `http://HOST:PORT` when nil.
    public var publicURL: String? = nil
    /// The log level of the server's logger.
    public var logLevel = Logger.Level.info
    /// The current time; tests inject a controllable clock.
    public var now: @Sendable () -> Date = { Date() }
    /// Request bodies larger than this are answered `413 payload_too_large`.
    public var maximumBodySize = 16 * 1024
    /// The lifetime of a session JWT.
    public var sessionJWTLifetimeSeconds: Int64 = 300
    /// Leeway when checking a session JWT's `exp`/`nbf`.
    public var sessionJWTLeewaySeconds: Int64 = 60
    /// How often a node refreshes its row in the database's node registry (its heartbeat).
    public var nodeHeartbeatInterval = Duration.seconds(15)
    /// A node whose heartbeat is at most this many seconds old is alive: `tessera migrate contract`
    /// waits for it (`TESSERA_NODE_ALIVE_SECONDS`). Keep it a few heartbeats long.
    public var nodeAliveSeconds: Int64 = 60
    /// How often the background cleanup runs, and how many rows of each kind one pass deletes.
    public var cleanupInterval = Duration.seconds(60)
    public var cleanupBatchSize = 500
    /// How long project settings and keys are cached before being read again (for multi-node setups).
    public var projectCacheSeconds: Int64 = 5
    /// Create and print a development project when the database has none.
    public var createDevelopmentProject = true
    /// Where the development project's keys are printed.
    public var announce: @Sendable (String) -> Void = { message in
        FileHandle.standardOutput.write(Data((message + "\n").utf8))
    }
    /// The header a trusted reverse proxy appends the client's address to (for example
    /// `X-Forwarded-For`); nil uses the socket's peer. Only the right-most address of the header is
    /// used: the one the proxy appended, not what the client sent. See ``ClientAddress``.
    public var trustedProxyHeader: String? = nil
    /// Session credentials that find no session (token guessing), per client address per minute,
    /// for the whole server (a session token names no project); nil is unlimited.
    public var failedSessionLookupsPerMinute: Int64? = 120
    /// Anonymous profiles older than this many days without a live session are deleted by the
    /// background cleanup, with their installations; nil keeps them forever.
    public var anonymousRetentionDays: Int64? = 30
    /// Events older than this many days are deleted from the feed by the background cleanup; nil
    /// keeps them forever.
    public var eventRetentionDays: Int64? = 30
    /// The file of the master key that seals identity secrets and signing keys. Nil: with SQLite,
    /// `master.key` beside the database (created on first start); PostgreSQL requires one.
    public var masterKeyFile: String? = nil
    /// Files of older master keys that only open values, while `tessera keys rewrap` moves them to
    /// the current key.
    public var previousMasterKeyFiles: [String] = []
    /// Keys given directly (tests, embedding); when set, the files above are not read.
    public var masterKeys: MasterKeyring? = nil
    /// Webhooks may use `http` URLs and loopback, link-local and private addresses (development
    /// and tests only).
    public var allowInsecureWebhooks = false
    /// The longest an idle webhook dispatcher sleeps: its fallback for other nodes' work (the events
    /// of a node that died before delivering them, the deliveries whose lease expired). This node's
    /// commits and the retries it scheduled wake it at once, whatever this interval.
    public var webhookPollInterval = Duration.seconds(30)
    /// Whether this node runs the webhook dispatcher (off: it only serves requests, and other nodes
    /// deliver; tests that drive a dispatcher by hand turn it off).
    public var deliverWebhooks = true
    /// Whether `/console/` serves the operator console (`--console off` turns it off).
    public var consoleEnabled = true
    /// How long a node keeps serving after a shutdown signal while `GET /health/ready` answers 503,
    /// before it closes its listener: long enough for load balancers to see it not ready (`--drain-seconds`).
    public var drainDelay = Duration.seconds(5)
    /// The bcrypt cost of operators' passwords (12: about a quarter of a second per sign-in; tests lower it).
    public var operatorPasswordCost = 12
    /// The roots App Attest attestation chains must lead to; nil (the default) trusts Apple's App
    /// Attestation Root CA only. Tests set a root of their own.
    public var appAttestTrustAnchors: [Certificate]? = nil
    /// Tracing and per-route request metrics (OpenTelemetry); nil (the default) traces nothing and
    /// costs nothing. ``fromEnvironment(_:)`` turns it on with an OTLP endpoint; see ``ServerTracing``.
    public var tracing: ServerTracing? = nil

    public init() {}

    /// The configuration from `TESSERA_HOST`, `TESSERA_PORT`, `TESSERA_DATABASE_URL`,
    /// `TESSERA_LOG_LEVEL`, `TESSERA_PUBLIC_URL`, `TESSERA_TRUSTED_PROXY_HEADER`,
    /// `TESSERA_FAILED_SESSION_LOOKUPS_PER_MINUTE` (0: unlimited),
    /// `TESSERA_ANONYMOUS_RETENTION_DAYS` and `TESSERA_EVENT_RETENTION_DAYS` (0: keep forever), `TESSERA_CONSOLE` (on|off),
    /// `TESSERA_MASTER_KEY_FILE`, `TESSERA_PREVIOUS_MASTER_KEY_FILES` (comma-separated) and
    /// `TESSERA_ALLOW_INSECURE_WEBHOOKS` (true or false), `TESSERA_DRAIN_SECONDS` and
    /// `TESSERA_NODE_ALIVE_SECONDS`, and tracing with `TESSERA_TRACING` (otlp or off) or the
    /// OpenTelemetry `OTEL_EXPORTER_OTLP_ENDPOINT`; unset variables keep the defaults.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> ServerConfiguration
    {
        var configuration = ServerConfiguration()
        if let host = environment["TESSERA_HOST"], !host.isEmpty { configuration.host = host }
        if let port = environment["TESSERA_PORT"], !port.isEmpty {
            guard let number = Int(port), (0...65535).contains(number) else {
                throw ConfigurationError("TESSERA_PORT must be a port number, not \(port)")
            }
            configuration.port = number
        }
        if let url = environment["TESSERA_DATABASE_URL"], !url.isEmpty { configuration.database = try DatabaseURL(url) }
        if let level = environment["TESSERA_LOG_LEVEL"], !level.isEmpty {
            guard let parsed = Logger.Level(rawValue: level.lowercased()) else {
                throw ConfigurationError(
                    "TESSERA_LOG_LEVEL must be one of trace, debug, info, notice, warning, error, critical")
            }
            configuration.logLevel = parsed
        }
        if let url = environment["TESSERA_PUBLIC_URL"], !url.isEmpty { configuration.publicURL = url }
        if let header = environment["TESSERA_TRUSTED_PROXY_HEADER"], !header.isEmpty {
            configuration.trustedProxyHeader = try validatedProxyHeader(header)
        }
        if let value = environment["TESSERA_FAILED_SESSION_LOOKUPS_PER_MINUTE"], !value.isEmpty {
            configuration.failedSessionLookupsPerMinute = try validatedLimit(
                value, name: "TESSERA_FAILED_SESSION_LOOKUPS_PER_MINUTE")
        }
        if let value = environment["TESSERA_ANONYMOUS_RETENTION_DAYS"], !value.isEmpty {
            configuration.anonymousRetentionDays = try validatedRetentionDays(
                value, name: "TESSERA_ANONYMOUS_RETENTION_DAYS")
        }
        if let value = environment["TESSERA_EVENT_RETENTION_DAYS"], !value.isEmpty {
            configuration.eventRetentionDays = try validatedRetentionDays(value, name: "TESSERA_EVENT_RETENTION_DAYS")
        }
        if let path = environment["TESSERA_MASTER_KEY_FILE"], !path.isEmpty { configuration.masterKeyFile = path }
        if let paths = environment["TESSERA_PREVIOUS_MASTER_KEY_FILES"], !paths.isEmpty {
            configuration.previousMasterKeyFiles = paths.split(separator: ",").map(String.init)
        }
        if let value = environment["TESSERA_ALLOW_INSECURE_WEBHOOKS"], !value.isEmpty {
            switch value.lowercased() {
            case "1", "true", "yes": configuration.allowInsecureWebhooks = true
            case "0", "false", "no": configuration.allowInsecureWebhooks = false
            default: throw ConfigurationError("TESSERA_ALLOW_INSECURE_WEBHOOKS must be true or false, not \(value)")
            }
        }
        if let value = environment["TESSERA_DRAIN_SECONDS"], !value.isEmpty {
            configuration.drainDelay = try validatedDrainDelay(value, name: "TESSERA_DRAIN_SECONDS")
        }
        if let value = environment["TESSERA_NODE_ALIVE_SECONDS"], !value.isEmpty {
            guard let seconds = Int64(value), (1...86_400).contains(seconds) else {
                throw ConfigurationError(
                    "TESSERA_NODE_ALIVE_SECONDS must be a number of seconds from 1 to 86400, not \(value)")
            }
            configuration.nodeAliveSeconds = seconds
        }
        if let value = environment["TESSERA_CONSOLE"], !value.isEmpty {
            switch value.lowercased() {
            case "on", "1", "true", "yes": configuration.consoleEnabled = true
            case "off", "0", "false", "no": configuration.consoleEnabled = false
            default: throw ConfigurationError("TESSERA_CONSOLE must be on or off, not \(value)")
            }
        }
        if try ServerTracing.enabled(in: environment) {
            do {
                configuration.tracing = try ServerTracing.otlp()
            } catch {
                throw ConfigurationError(
                    "Tracing cannot start (\(error)): Tessera exports OTLP over HTTP with protobuf only "
                        + "(OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf); see docs/OPERATIONS.md, \"Tracing\"")
            }
        }
        return configuration
    }

    /// A header name for ``trustedProxyHeader``.
    public static func validatedProxyHeader(_ name: String) throws -> String {
        guard InputRules.isHeaderName(name) else { throw ConfigurationError("\(name) is not an HTTP header name") }
        return name
    }

    /// A per-minute limit: a positive number, or 0 for unlimited (nil).
    public static func validatedLimit(_ value: String, name: String) throws -> Int64? {
        guard let number = Int64(value), number == 0 || RateLimits.range.contains(number) else {
            throw ConfigurationError("\(name) must be 0 (unlimited) to \(RateLimits.range.upperBound), not \(value)")
        }
        return number == 0 ? nil : number
    }

    /// A retention in days: a positive number, or 0 to keep anonymous profiles forever (nil).
    public static func validatedRetentionDays(_ value: String, name: String) throws -> Int64? {
        guard let days = Int64(value), (0...36_500).contains(days) else {
            throw ConfigurationError("\(name) must be 0 (keep forever) to 36500 days, not \(value)")
        }
        return days == 0 ? nil : days
    }

    /// A drain delay in whole seconds, 0 to 300.
    public static func validatedDrainDelay(_ value: String, name: String) throws -> Duration {
        guard let seconds = Int64(value), (0...300).contains(seconds) else {
            throw ConfigurationError("\(name) must be 0 to 300 seconds, not \(value)")
        }
        return .seconds(seconds)
    }

    /// The `iss` of session JWTs.
    var issuer: String {
        if let publicURL { return publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "http://\(shownHost):\(port)"
    }
}

/// A configuration value that cannot be used.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
