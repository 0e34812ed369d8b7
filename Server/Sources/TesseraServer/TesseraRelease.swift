/// The release this build is, and the schema version it runs on.
///
/// `tessera --version` prints both and `GET /health/ready` reports them, so an operator rolling a
/// release through many nodes can tell which node runs what. The release follows `CHANGELOG.md`
/// at the repository's root; the contract's own version is `info.version` of `Server/openapi.json`.
public enum TesseraRelease {
    /// The release, in semantic versioning (a `-dev` suffix while it is not released).
    public static let version = "0.3.0-dev"

    /// The schema version this build expects: the number of its latest migration (the same on
    /// SQLite and PostgreSQL). A node is ready only when its database is at this version.
    public static var schemaVersion: Int64 { Int64(SQLiteMigrations.all.map(\.version).max() ?? 0) }

    /// The line `tessera --version` prints: `0.3.0-dev (schema 17)`.
    public static var description: String { "\(version) (schema \(schemaVersion))" }
}
