/// One numbered change of the schema, and whether the release before it still runs on the result.
///
/// Every step is an **expand** step or a **contract** step. An expand step leaves the schema usable
/// by the previous release (it adds tables, nullable or defaulted columns, indexes; it never drops,
/// renames or narrows anything the previous release reads or writes), so `tessera serve` applies it
/// while older nodes keep serving. A contract step removes what only older releases used; it runs
/// only through `tessera migrate contract`, once no node older than ``requiredRelease`` is alive.
/// Adding a step is one entry at the end of each backend's list (`SQLiteMigrations.all`,
/// `PostgresMigrations.all`), with the same number and kind on both.
public struct MigrationStep: Sendable {
    /// The step's number, unique and the same on every backend.
    public let version: Int64
    public let kind: MigrationKind
    /// For a contract step: the oldest release that runs on the contracted schema (nodes of an older
    /// release block it, and refuse to start after it). Nil for expand steps.
    public let requiredRelease: String?
    /// The statements, separated by semicolons.
    public let sql: String

    /// An expand step: the previous release keeps running on its result.
    public static func expand(_ version: Int64, _ sql: String) -> MigrationStep {
        MigrationStep(version: version, kind: .expand, requiredRelease: nil, sql: sql)
    }

    /// A contract step: only nodes of `release` or newer run on its result.
    public static func contract(_ version: Int64, release: String, _ sql: String) -> MigrationStep {
        MigrationStep(version: version, kind: .contract, requiredRelease: release, sql: sql)
    }
}

/// Whether a step keeps the previous release running (`expand`) or ends its support (`contract`).
public enum MigrationKind: String, Sendable, Equatable {
    case expand
    case contract
}
