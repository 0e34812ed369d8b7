import Foundation

/// Where the server keeps its data: `sqlite:PATH` or `postgres://…`.
public enum DatabaseURL: Sendable, Hashable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(url: String)

    /// Parses `sqlite:PATH` (also `sqlite://PATH`) or `postgres://…` / `postgresql://…`.
    public init(_ text: String) throws {
        if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            self = .postgres(url: text)
            return
        }
        guard text.hasPrefix("sqlite:") else {
            throw ConfigurationError("the database URL must be sqlite:PATH or postgres://…, not \(text.prefix(16))…")
        }
        var path = String(text.dropFirst("sqlite:".count))
        if path.hasPrefix("//") { path = String(path.dropFirst(2)) }
        guard !path.isEmpty else {
            throw ConfigurationError("sqlite: needs a file path, e.g. sqlite:.tessera/tessera.sqlite")
        }
        self = .sqlite(path: path)
    }

    /// The URL without any password.
    public var description: String {
        switch self {
        case .sqlite(let path): return "sqlite:\(path)"
        case .postgres: return "postgres://…"
        }
    }

    /// The URL with any password replaced by `***`, for display.
    public var redacted: String {
        switch self {
        case .sqlite(let path): return "sqlite:\(path)"
        case .postgres(let url):
            guard let scheme = url.range(of: "://") else { return "postgres://…" }
            var rest = String(url[scheme.upperBound...])
            if let at = rest.range(of: "@", options: .backwards),
                let colon = rest[..<at.lowerBound].firstIndex(of: ":")
            {
                rest.replaceSubrange(rest.index(after: colon)..<at.lowerBound, with: "***")
            }
            if let query = rest.range(of: "password=") {
                let end = rest[query.upperBound...].firstIndex(of: "&") ?? rest.endIndex
                rest.replaceSubrange(query.upperBound..<end, with: "***")
            }
            return String(url[..<scheme.upperBound]) + rest
        }
    }

    /// Opens the store this URL names, sealing secrets with `masterKeys`.
    public func makeStore(masterKeys: MasterKeyring) throws -> any TesseraStore {
        switch self {
        case .sqlite(let path):
            return try SQLiteStore(path: path, masterKeys: masterKeys)
        case .postgres(let url):
            return try PostgresStore(url: url, masterKeys: masterKeys)
        }
    }
}
