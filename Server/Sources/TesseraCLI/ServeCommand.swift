import ArgumentParser
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import TesseraServer

/// `tessera serve`: runs the server until SIGTERM or SIGINT, then drains it.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the server.",
        discussion:
            "Flags override the TESSERA_HOST, TESSERA_PORT, TESSERA_DATABASE_URL, TESSERA_LOG_LEVEL, TESSERA_PUBLIC_URL, TESSERA_TRUSTED_PROXY_HEADER, TESSERA_FAILED_SESSION_LOOKUPS_PER_MINUTE, TESSERA_ANONYMOUS_RETENTION_DAYS, TESSERA_EVENT_RETENTION_DAYS, TESSERA_MASTER_KEY_FILE, TESSERA_PREVIOUS_MASTER_KEY_FILES, TESSERA_ALLOW_INSECURE_WEBHOOKS, TESSERA_DRAIN_SECONDS and TESSERA_EVENT_LOOP_EXECUTOR environment variables; TESSERA_NODE_ALIVE_SECONDS (default 60) is how recent a node's heartbeat must be for `tessera migrate contract` to count it alive."
    )

    @OptionGroup var options: ServeOptions

    func run() async throws {
        LoggingSystem.bootstrap { label in TesseraLogHandler(label: label) }
        // Request handlers then run on the event loop that read the request (SwiftNIO's documented
        // take-over of the global executor) instead of hopping to Swift's default thread pool and back
        // for every request. Nothing in the server blocks a thread for long: SQLite writes have a
        // thread of their own and its reads are short indexed lookups.
        if options.eventLoopExecutor, ProcessInfo.processInfo.environment["TESSERA_EVENT_LOOP_EXECUTOR"] != "0" {
            NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        }
        let configuration = try options.configuration()
        // Before the database is opened or a key printed: a second `serve` must change nothing.
        if PortCheck.isInUse(host: configuration.host, port: configuration.port) {
            throw CLIError(description: "Port \(configuration.port) is in use (pass --port or stop the other server).")
        }
        do {
            // SIGTERM or SIGINT drains the node: /health/ready answers 503 for --drain-seconds, then the
            // listener closes and what is in flight finishes.
            let node = try await buildNode(configuration: configuration)
            try await node.runService()
        } catch {
            // A refusal (a master key that does not open, a database contracted for a newer release
            // this node must be upgraded to): a clear message and a non-zero exit, never a crash.
            throw CLIError.reporting(error)
        }
    }
}
