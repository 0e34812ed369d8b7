public import Hummingbird
import Logging
import NIOCore
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
    var logger = Logger(label: "tessera")
    logger.logLevel = configuration.logLevel
    let store = try await configuration.openStore(logger: logger)
    return try await buildApplication(configuration: configuration, store: store)
}

/// Builds a Tessera node (the application and the drain before its shutdown): opens and migrates
/// the database named by the configuration, as ``buildApplication(configuration:)`` does.
///
/// `tessera serve` runs it with ``TesseraNode/runService()``.
public func buildNode(configuration: ServerConfiguration) async throws -> TesseraNode {
    var logger = Logger(label: "tessera")
    logger.logLevel = configuration.logLevel
    let store = try await configuration.openStore(logger: logger)
    return try await makeNode(configuration: configuration, store: store)
}

/// Builds the application on a store that is already open (tests pass their own); the store's
/// master keys must open every sealed value (`master_key_mismatch` otherwise).
public func buildApplication(configuration: ServerConfiguration, store: any TesseraStore) async throws
    -> some ApplicationProtocol
{
    try await makeNode(configuration: configuration, store: store).application
}

/// Builds a node: the application and its drain (``TesseraNode``), on a store that is already open.
///
/// - Parameter onServerRunning: called once the listener is bound (tests learn the port from it).
func makeNode(
    configuration: ServerConfiguration, store: any TesseraStore,
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) async throws -> TesseraNode {
    var logger = Logger(label: "tessera")
    logger.logLevel = configuration.logLevel
    // Expand steps only, and this node's row in the registry, under the migration lock: a database
    // contracted for a newer release refuses the node (MigrationError), and a contract step cannot
    // slip in between that check and the registration.
    let startedAt = Int64(configuration.now().timeIntervalSince1970.rounded(.down))
    let node = NodeRecord(
        id: NodeRegistryService.makeNodeID(), release: TesseraRelease.version,
        schemaVersion: TesseraRelease.schemaVersion, startedAt: startedAt, heartbeatAt: startedAt)
    _ = try await store.migrate(
        MigrationRequest(kind: .expand, node: node, now: startedAt, aliveSeconds: configuration.nodeAliveSeconds))
    // Refuses a database sealed under another master key before anything is served, and seals the
    // plaintext secrets of an older version.
    let sealing = try await SecretResealer.sealPlaintextAndVerify(store: store)
    if sealing.sealedPlaintext > 0 {
        logger.notice("Sealed \(sealing.sealedPlaintext) plaintext secrets of an older version.")
    }
    if configuration.createDevelopmentProject, try await store.projectCount() == 0 {
        let project = try await ProjectProvisioner.create(
            name: "Development", slug: "development", store: store, now: configuration.now())
        configuration.announce("Created a development project on an empty database.\n\(project.text)")
    }
    if configuration.consoleEnabled {
        // In the server's log (stderr), at start: where the console is and, while no operator exists,
        // how to make the first.
        logger.notice("Console: \(configuration.issuer)/console/")
        if try await store.operators().isEmpty {
            logger.notice(
                "No operator yet: tessera operators create --email you@example.com --role owner --console-url \(configuration.issuer)"
            )
        }
    }
    let activity = NodeActivity()
    let core = TesseraCore(
        store: store, configuration: configuration, metrics: ServerMetrics(), activity: activity,
        masterKeyVerified: true)
    let router = TesseraRouter.build(core: core)
    var services: [any Service] = [
        StoreService(store: store),
        // After the store: a service group stops its services in reverse, so the row is deleted
        // before the store closes.
        NodeRegistryService(
            store: store, node: node, interval: configuration.nodeHeartbeatInterval, now: configuration.now,
            logger: logger),
        CleanupService(
            store: store, interval: configuration.cleanupInterval, batchSize: configuration.cleanupBatchSize,
            anonymousRetentionSeconds: configuration.anonymousRetentionDays.map { $0 * 86_400 },
            eventRetentionSeconds: configuration.eventRetentionDays.map { $0 * 86_400 },
            now: configuration.now, logger: logger),
        ActivityFlushService(
            recorder: core.activeUsers, clients: core.sessionClients, now: configuration.now, logger: logger),
    ]
    // First, so they stop last: the spans of the drained requests are exported.
    services.insert(contentsOf: configuration.tracing?.services ?? [], at: 0)
    if configuration.deliverWebhooks {
        services.append(
            WebhookDispatcher(
                store: store, transport: WebhookSender(allowInsecure: configuration.allowInsecureWebhooks).send,
                now: configuration.now, interval: configuration.webhookPollInterval, metrics: core.metrics,
                activity: activity, tracer: configuration.tracing?.tracer, logger: logger))
    }
    let application = Application(
        router: router,
        server: .tesseraHTTP1,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port)),
        services: services,
        onServerRunning: onServerRunning,
        logger: logger)
    return TesseraNode(
        application: application,
        drain: DrainService(activity: activity, delay: configuration.drainDelay, logger: logger),
        activity: activity, logger: logger)
}
