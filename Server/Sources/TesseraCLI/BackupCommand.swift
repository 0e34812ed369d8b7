import ArgumentParser
import TesseraServer

/// `tessera backup --to PATH`: an online copy of an SQLite database.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the SQLite database to a new file while the server runs.",
        discussion:
            "The copy holds the secrets sealed, as the database does: keep the master key file too, stored apart from the backups. For PostgreSQL use pg_dump."
    )

    @Option(help: "The backup file to create; an existing file is never overwritten.")
    var to: String

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let configuration = try store.configuration()
        guard case .sqlite = configuration.database else {
            throw CLIError(
                description:
                    "tessera backup copies SQLite databases; back up PostgreSQL with pg_dump (for example pg_dump --format=custom --file=tessera.dump DATABASE_URL)"
            )
        }
        let keyID = try await CLIStore.with(configuration) { store in
            guard let sqlite = store as? SQLiteStore else { throw CLIError(description: "not an SQLite store") }
            try await sqlite.backup(to: to)
            return sqlite.masterKeys.current.id
        }
        print(
            "Wrote a backup to \(to). Its secrets are sealed under master key \(keyID): restoring it needs that key file."
        )
    }
}
