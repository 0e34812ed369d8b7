import ArgumentParser
import Foundation
import TesseraServer

/// `tessera keys`: the master key that seals the secrets in the database.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Master keys: create one, re-seal the database under a new one.",
        subcommands: [Generate.self, Rewrap.self]
    )

    /// `tessera keys generate --to PATH`
    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a new random master key to a new file (mode 0600) and print its key ID.")

        @Option(help: "The file to create; an existing file is never overwritten.")
        var to: String

        func run() throws {
            let key = MasterKey.generate()
            do {
                try key.write(toNewFile: to)
            } catch {
                throw CLIError(description: error.message)
            }
            print("Wrote master key \(key.id) to \(to).")
        }
    }

    /// `tessera keys rewrap --new-master-key-file PATH [--master-key-file OLD] [--database URL]`
    struct Rewrap: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-seal every secret in the database under a new master key, while servers run.",
            discussion:
                "Every running server must already hold the new key (as --master-key-file, with the old one as --previous-master-key-file) so that it opens values sealed under either; see docs/OPERATIONS.md. Each value is replaced in a transaction of its own: an interrupted rewrap leaves every value sealed under the old or the new key, and running it again finishes the work."
        )

        @Option(help: "The new master key file (create it with `tessera keys generate --to PATH`).")
        var newMasterKeyFile: String

        @Flag(help: "Print each value on standard error as it is rewrapped.")
        var verbose = false

        @OptionGroup var store: StoreOptions

        func run() async throws {
            var configuration = try store.configuration()
            let newKey: MasterKey
            let old: MasterKeySetup
            do {
                newKey = try MasterKey.load(path: newMasterKeyFile)
                old = try MasterKeySetup(configuration: configuration)
            } catch {
                throw CLIError(description: error.description)
            }
            // A missing default key file means an older, unsealed database: there is no old key.
            let oldKeys = old.needsCreating ? old.keyring.previous : [old.keyring.current] + old.keyring.previous
            configuration.masterKeys = MasterKeyring(current: newKey, previous: oldKeys)
            let verbose = verbose
            let report = try await CLIStore.with(configuration) { store in
                try await SecretResealer.rewrap(store: store) { cell in
                    if verbose {
                        FileHandle.standardError.write(
                            Data("rewrapped \(cell.kind.rawValue) \(cell.projectID)/\(cell.rowID)\n".utf8))
                    }
                }
            }
            print(
                """
                Every secret is now sealed under master key \(newKey.id) (\(report.rewrapped) rewrapped, \
                \(report.sealedPlaintext) plaintext sealed, \(report.unchanged) already under it).
                Run every server with --master-key-file \(newMasterKeyFile) alone, then delete the old key file.
                """)
        }
    }
}
