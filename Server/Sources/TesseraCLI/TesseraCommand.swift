import ArgumentParser

/// The `tessera` command: parses arguments and calls the `TesseraServer` library.
@main
struct TesseraCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tessera",
        abstract: "The Tessera identity and session server.",
        subcommands: [
            ServeCommand.self, ProjectsCommand.self, TokenCommand.self, KeysCommand.self, ConfigCommand.self,
            BackupCommand.self, OperatorsCommand.self,
        ],
        defaultSubcommand: ServeCommand.self
    )
}
