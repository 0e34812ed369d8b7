import Foundation
import TesseraTestProcess

@testable import TesseraServer

/// Runs a Tessera node on a free loopback port whose public URL names that port, for the tests that
/// drive the SDK against a live server: a DPoP proof's `htu` is the server's public URL and the path,
/// so the server must know its port before it listens (the `.live` test framework of HummingbirdTesting
/// always binds port 0, which the server would call `:0`).
enum LiveNode {
    /// Runs `body` with the port of a node on `store`, then stops the node.
    static func run(
        configuration: ServerConfiguration, store: any TesseraStore, _ body: (Int) async throws -> Void
    ) async throws {
        var configuration = configuration
        configuration.port = try LoopbackSocket.freePort()
        configuration.host = "127.0.0.1"
        configuration.publicURL = "http://127.0.0.1:\(configuration.port)"
        configuration.drainDelay = .zero
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let node = try await makeNode(configuration: configuration, store: store) { channel in
            listening.yield(channel.localAddress?.port ?? 0)
        }
        let running = Task {
            defer { listening.finish() }
            try await node.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            // The node stopped before it listened (the port was taken meanwhile): its error says why.
            try await running.value
            throw LiveServerError("the node stopped before it listened")
        }
        do {
            try await body(port)
        } catch {
            running.cancel()
            _ = try? await running.value
            throw error
        }
        running.cancel()
        _ = try? await running.value
    }

    /// A node's configuration in the tests: no development project, only critical log messages.
    static var quiet: ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.createDevelopmentProject = false
        configuration.logLevel = .critical
        return configuration
    }

    /// Runs `body` with the port of a node on a fresh SQLite store in a temporary directory, holding one
    /// project made with `settings`, then stops the node and removes the directory.
    static func run(
        project name: String, settings: ProjectSettings = ProjectSettings(), configuration: ServerConfiguration = quiet,
        _ body: (Int, ProvisionedProject) async throws -> Void
    ) async throws {
        try await run(project: name, settings: settings, configuration: configuration) { port, project, _ in
            try await body(port, project)
        }
    }

    /// Runs `body` with the port of a node on a fresh SQLite store in a temporary directory, holding one
    /// project made with `settings`, and the store, then stops the node and removes the directory.
    static func run(
        project name: String, settings: ProjectSettings = ProjectSettings(), configuration: ServerConfiguration = quiet,
        _ body: (Int, ProvisionedProject, SQLiteStore) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-e2e-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(
            path: directory.appendingPathComponent("server.sqlite").path,
            masterKeys: MasterKeyring(current: .generate()))
        try await store.migrate()
        let project = try await ProjectProvisioner.create(
            name: name, slug: name.lowercased(), settings: settings, store: store, now: Date())
        try await run(configuration: configuration, store: store) { port in try await body(port, project, store) }
    }
}
