import ArgumentParser
import Foundation
import TesseraServer

/// `tessera migrate status|expand|contract`: the schema's expand and contract steps, by hand.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Show and apply the schema's expand and contract steps.",
        discussion:
            "`tessera serve` applies expand steps itself (the previous release keeps running on them). A contract step ends the previous release's support: run `tessera migrate contract` once every node runs the new release. See docs/OPERATIONS.md, \"Upgrades\".",
        subcommands: [Status.self, Expand.self, Contract.self]
    )

    /// The options of every `migrate` subcommand.
    struct Options: ParsableArguments {
        @OptionGroup var store: StoreOptions

        @Option(
            help:
                "A node whose heartbeat is at most this many seconds old is alive (default: TESSERA_NODE_ALIVE_SECONDS, else 60)."
        )
        var aliveSeconds: Int64?

        func configuration() throws -> ServerConfiguration {
            var configuration = try store.configuration()
            if let aliveSeconds {
                guard (1...86_400).contains(aliveSeconds) else {
                    throw ValidationError("--alive-seconds must be from 1 to 86400")
                }
                configuration.nodeAliveSeconds = aliveSeconds
            }
            return configuration
        }

        /// Runs `body` on the store, closed afterwards; refusals become `Error: …` lines.
        func withStore<T>(_ body: (any TesseraStore, ServerConfiguration) async throws -> T) async throws -> T {
            let configuration = try configuration()
            let store: any TesseraStore
            do {
                store = try configuration.openStoreWithoutMigrating()
            } catch {
                throw CLIError.reporting(error)
            }
            do {
                let result = try await body(store, configuration)
                try await store.close()
                return result
            } catch {
                try? await store.close()
                throw CLIError.reporting(error)
            }
        }
    }

    /// `tessera migrate status`
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the applied steps, the pending ones, and every live node with its release.")

        @OptionGroup var options: Options

        func run() async throws {
            let text = try await options.withStore { store, configuration in
                try await MigrationStatus.read(
                    store: store, now: Int64(Date().timeIntervalSince1970), aliveSeconds: configuration.nodeAliveSeconds
                ).text
            }
            Swift.print(text)
        }
    }

    /// `tessera migrate expand`
    struct Expand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply the pending expand steps (what `tessera serve` does when it starts).")

        @OptionGroup var options: Options

        func run() async throws {
            try await MigrateCommand.apply(.expand, options: options)
        }
    }

    /// `tessera migrate contract`
    struct Contract: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Apply the pending contract steps; refused while a live node runs a release older than a step requires."
        )

        @OptionGroup var options: Options

        func run() async throws {
            try await MigrateCommand.apply(.contract, options: options)
        }
    }

    /// Applies the pending steps of `kind` and prints what it did.
    static func apply(_ kind: MigrationKind, options: Options) async throws {
        let report = try await options.withStore { store, configuration in
            try await store.migrate(
                MigrationRequest(
                    kind: kind, now: Int64(Date().timeIntervalSince1970), aliveSeconds: configuration.nodeAliveSeconds))
        }
        Self.report(report, kind: kind)
    }

    static func report(_ report: MigrationReport, kind: MigrationKind) {
        if let path = report.backupPath {
            Swift.print("Copied the database to \(path) (mode 0600) before migrating.")
        }
        Swift.print(
            report.applied.isEmpty
                ? "No pending \(kind.rawValue) step."
                : "Applied \(kind.rawValue) steps \(report.applied.map(String.init).joined(separator: ", ")).")
    }
}
