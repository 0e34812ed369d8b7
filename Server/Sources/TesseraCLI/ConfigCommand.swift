import ArgumentParser
import TesseraServer

/// `tessera config`: the configuration `serve` would run with.
struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Check the configuration.",
        subcommands: [Check.self]
    )

    /// `tessera config check [serve's flags]`
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Validate the flags and TESSERA_* variables as `serve` would and print the effective configuration, without secrets."
        )

        @OptionGroup var options: ServeOptions

        func run() throws {
            let configuration = try options.configuration()
            let report: String
            do {
                report = try configuration.report()
            } catch {
                throw CLIError(description: error.description)
            }
            print("The configuration is valid.\n" + report)
        }
    }
}
