public import Hummingbird
import Logging
import ServiceLifecycle

/// Builds the Tessera server application: opens and migrates the database named by the
/// configuration, creates a development project on an empty database, and wires every endpoint.
///
/// ```swift
/// var configuration = ServerConfiguration()
/// configuration.port = 8080
/// let app = try await buildApplication(configuration: configuration)
/// try await app.runService()
/// ```
public func buildApplication(configuration: ServerConfiguration) async throws -> some ApplicationProtocol {
    let store = try configuration.database.makeStore()
    return try await buildApplication(configuration: configuration, store: store)
}

/// Builds the application on a store that is already open (tests pass their own).
public func buildApplication(configuration: ServerConfiguration, store: any TesseraStore) async throws
    -> some ApplicationProtocol
{
    var logger = Logger(label: "tessera")
    logger.logLevel = configuration.logLevel
    try await store.migrate()
    if configuration.createDevelopmentProject, try await store.projectCount() == 0 {
        let project = try await ProjectProvisioner.create(
            name: "Development", slug: "development", store: store, now: configuration.now())
        configuration.announce("Created a development project on an empty database.\n\(project.text)")
    }
    let now = configuration.now
    let metrics = ServerMetrics()
    let api = TesseraAPI(
        store: store,
        projects: ProjectCache(
            store: store, timeToLiveSeconds: configuration.projectCacheSeconds,
            retiredKeyWindow: configuration.sessionJWTLifetimeSeconds + configuration.sessionJWTLeewaySeconds,
            now: { Int64(now().timeIntervalSince1970.rounded(.down)) }),
        configuration: configuration, metrics: metrics, issuer: configuration.issuer)
    let router = TesseraRouter.build(api: api)
    return Application(
        router: router,
        server: .tesseraHTTP1,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port)),
        services: [
            StoreService(store: store),
            CleanupService(
                store: store, interval: configuration.cleanupInterval, batchSize: configuration.cleanupBatchSize,
                anonymousRetentionSeconds: configuration.anonymousRetentionDays.map { $0 * 86_400 },
                now: configuration.now, logger: logger),
        ],
        logger: logger)
}
