import ArgumentParser
import TesseraServer

/// The `tessera` command: parses arguments and calls the `TesseraServer` library.
@main
struct TesseraCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tessera",
        abstract: "The Tessera identity and session server.",
        // `tessera --version`: the release and the schema version this build migrates to.
        version: TesseraRelease.description,
        subcommands: [
            ServeCommand.self, ProjectsCommand.self, TokenCommand.self, KeysCommand.self, ConfigCommand.self,
            BackupCommand.self, OperatorsCommand.self, MigrateCommand.self,
        ],
        defaultSubcommand: ServeCommand.self
    )
}
