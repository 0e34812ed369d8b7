import Foundation

@testable import TesseraServer

/// The PostgreSQL server the tests may use: `TESSERA_TEST_POSTGRES_URL` (set by `scripts/test`,
/// which starts a throwaway cluster with `scripts/postgres start`).
enum PostgresTestDatabase {
    static var url: String? {
        let value = ProcessInfo.processInfo.environment["TESSERA_TEST_POSTGRES_URL"] ?? ""
        return value.isEmpty ? nil : value
    }

    static var isConfigured: Bool { url != nil }

    /// A store in a schema of its own, so every test starts from an empty database; the schema is
    /// created by the store's first `migrate()`.
    static func makeStore(maximumConnections: Int = 2) throws -> PostgresStore {
        PostgresStore(
            configuration: try configuration(maximumConnections: maximumConnections), masterKeys: TestMasterKeys.keyring
        )
    }

    /// The configuration of a fresh schema.
    static func configuration(maximumConnections: Int = 2) throws -> PostgresConfiguration {
        guard let url else { throw ConfigurationError("TESSERA_TEST_POSTGRES_URL is not set") }
        var configuration = try PostgresConfiguration(url: url)
        configuration.schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        configuration.minimumConnections = 0
        configuration.maximumConnections = maximumConnections
        configuration.connectionIdleTimeout = .seconds(5)
        // Every test opens its own pool at once: leave room for a busy machine.
        configuration.operationTimeout = .seconds(60)
        return configuration
    }

    /// Two stores on one fresh schema, as two nodes, migrated, with one project named `name`.
    static func twoNodes(project name: String) async throws -> (PostgresStore, PostgresStore, ProvisionedProject) {
        let configuration = try Self.configuration(maximumConnections: 8)
        let (one, project) = try await node(configuration, project: name)
        return (one, try await node(configuration), project)
    }

    /// A store (a node) on the schema of `configuration`, migrated.
    static func node(_ configuration: PostgresConfiguration) async throws -> PostgresStore {
        let store = PostgresStore(configuration: configuration, masterKeys: TestMasterKeys.keyring)
        try await store.migrate()
        return store
    }

    /// A store (a node) on the schema of `configuration`, migrated, and a new project `name` in it.
    static func node(_ configuration: PostgresConfiguration, project name: String) async throws -> (
        PostgresStore, ProvisionedProject
    ) {
        let store = try await node(configuration)
        let project = try await ProjectProvisioner.create(
            name: name, slug: "\(name.lowercased())-\(UUID().uuidString.prefix(8).lowercased())", store: store,
            now: Date(timeIntervalSince1970: 1_795_000_000))
        return (store, project)
    }
}

extension StoreBackend {
    /// The backend the server's tests run on: `TESSERA_TEST_DATABASE=postgres` selects PostgreSQL.
    static var selected: StoreBackend {
        ProcessInfo.processInfo.environment["TESSERA_TEST_DATABASE"] == "postgres" ? .postgres : .sqlite
    }
}
