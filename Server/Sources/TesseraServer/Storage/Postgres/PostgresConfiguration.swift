import Foundation

/// How ``PostgresStore`` connects: the server, the pool's limits and how long an operation may wait.
///
/// Parsed from `postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=disable&pool_max=20`.
public struct PostgresConfiguration: Sendable, Hashable {
    public enum TLSMode: String, Sendable, Hashable {
        /// Plain TCP (loopback or a private network).
        case disable
        /// TLS when the server offers it.
        case prefer
        /// TLS or no connection.
        case require
    }

    public var host = "127.0.0.1"
    public var port = 5432
    public var username = "postgres"
    public var password: String? = nil
    public var database: String? = nil
    public var tls = TLSMode.prefer
    /// The schema the store's tables live in (`search_path`); the server's default when nil.
    public var schema: String? = nil
    /// Connections the pool keeps open even when idle.
    public var minimumConnections = 1
    /// The most connections the pool of one server process opens. Each process also keeps up to two
    /// connections of its own for batched session lookups (while they are in use), so size it so
    /// that nodes × (this + 2) stays below the database's `max_connections`.
    public var maximumConnections = 20
    /// How long an idle connection above the minimum stays open.
    public var connectionIdleTimeout = Duration.seconds(60)
    /// How long one connection attempt may take.
    public var connectTimeout = Duration.seconds(3)
    /// How long one store operation may take, waiting for a connection included, before it fails
    /// with `service_unavailable`.
    public var operationTimeout = Duration.seconds(5)
    /// How many times a transaction that lost a race (serialization failure, deadlock, a unique
    /// key taken concurrently) is run again.
    public var maximumRetries = 5
    /// How long a migration (a node's start, `tessera migrate`) keeps trying a database that does not
    /// answer yet, or answers too slowly, before it gives up: nodes that start together on a busy
    /// database wait their turn instead of refusing to start.
    public var startupTimeout = Duration.seconds(120)

    public init() {}

    /// Parses a `postgres://` or `postgresql://` URL.
    ///
    /// - Parameter url: the URL; query items `sslmode` (`disable`, `prefer`, `require`, `verify-full`),
    ///   `pool_min`, `pool_max`, `schema`, `connect_timeout`, `operation_timeout` and `startup_timeout` (seconds).
    public init(url: String) throws {
        guard let components = URLComponents(string: url),
            components.scheme == "postgres" || components.scheme == "postgresql"
        else {
            throw ConfigurationError("the PostgreSQL URL must look like postgres://USER:PASSWORD@HOST:PORT/DATABASE")
        }
        if let host = components.host, !host.isEmpty { self.host = host }
        if let port = components.port { self.port = port }
        if let user = components.user, !user.isEmpty { self.username = user.removingPercentEncoding ?? user }
        if let password = components.password { self.password = password.removingPercentEncoding ?? password }
        let path = components.path.drop { $0 == "/" }
        if !path.isEmpty { self.database = String(path) }
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                switch value {
                case "disable", "allow": tls = .disable
                case "prefer": tls = .prefer
                case "require", "verify-ca", "verify-full": tls = .require
                default: throw ConfigurationError("sslmode must be disable, prefer or require, not \(value)")
                }
            case "pool_min", "pool_max", "connect_timeout", "operation_timeout", "startup_timeout":
                guard let number = Int(value), number >= 0, number <= 10_000 else {
                    throw ConfigurationError("\(item.name) must be a small non-negative number")
                }
                switch item.name {
                case "pool_min": minimumConnections = number
                case "pool_max": maximumConnections = max(1, number)
                case "connect_timeout": connectTimeout = .seconds(max(1, number))
                case "startup_timeout": startupTimeout = .seconds(number)
                default: operationTimeout = .seconds(max(1, number))
                }
            case "schema":
                guard Self.isPlainIdentifier(value) else {
                    throw ConfigurationError("schema must be a plain identifier ([a-z_][a-z0-9_]*)")
                }
                schema = value
            default:
                continue
            }
        }
        minimumConnections = min(minimumConnections, maximumConnections)
        // Loopback needs no TLS; anything else prefers it unless the URL says otherwise.
        if !(components.queryItems ?? []).contains(where: { $0.name == "sslmode" }),
            ["127.0.0.1", "localhost", "::1"].contains(host)
        {
            tls = .disable
        }
    }

    /// Whether `text` can be used unquoted as a schema name.
    static func isPlainIdentifier(_ text: String) -> Bool {
        guard let first = text.utf8.first, text.utf8.count <= 63 else { return false }
        let lowerOrUnderscore: (UInt8) -> Bool = { ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F }
        return lowerOrUnderscore(first) && text.utf8.allSatisfy { lowerOrUnderscore($0) || ($0 >= 0x30 && $0 <= 0x39) }
    }
}
