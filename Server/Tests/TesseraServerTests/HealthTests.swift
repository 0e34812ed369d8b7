import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import TesseraTokens
import Testing

@testable import TesseraServer

/// `GET|HEAD /health/live` and `/health/ready`, `HEAD /health`, and the release and schema versions
/// they report.
@Suite("Health: liveness, readiness and versions")
struct HealthTests {
    @Test("live, ready and HEAD answer 200 on a node whose database is current", arguments: StoreBackend.allCases)
    func readyNode(_ backend: StoreBackend) async throws {
        try await TestEnvironment.withApp(backend: backend) { environment, client in
            let live = try await client.send(.get, "/health/live")
            #expect(live.status == .ok)
            #expect(live.json["status"] as? String == "ok")
            let ready = try await client.send(.get, "/health/ready")
            #expect(ready.status == .ok)
            #expect(ready.json["status"] as? String == "ready")
            #expect(ready.json["version"] as? String == TesseraRelease.version)
            #expect(ready.json["schema_version"] as? Int == Int(TesseraRelease.schemaVersion))
            #expect(ready.json["database_schema_version"] as? Int == Int(TesseraRelease.schemaVersion))
            #expect(ready.json["draining"] as? Bool == false)
            #expect(ready.json["error"] == nil)
            #expect(ready["checks"] as? [String: String] == ["database": "ok", "migrations": "ok", "master_key": "ok"])
            #expect(ready.headers[.xRequestID] != nil)
            for path in ["/health", "/health/live", "/health/ready", "/openapi.json"] {
                let head = try await client.send(.head, path)
                #expect(head.status == .ok, "HEAD \(path)")
                #expect(head.body.isEmpty, "HEAD \(path) has no body")
            }
            // HEAD /openapi.json answers GET's headers (its type), without the document.
            let document = try await client.send(.get, "/openapi.json")
            let head = try await client.send(.head, "/openapi.json")
            #expect(
                document.headers[.contentType] != nil && head.headers[.contentType] == document.headers[.contentType])
            // The v1 check is unchanged.
            let health = try await client.send(.get, "/health")
            #expect(health.status == .ok)
            #expect(health.json as NSDictionary == ["status": "ok"] as NSDictionary)
            // Other methods are 405 with the methods the path takes.
            let post = try await client.send(.post, "/health/ready")
            #expect(post.status == .methodNotAllowed)
            #expect(post.headers[.allow] == "GET, HEAD")
        }
    }

    @Test("ready is 503 while the database's schema is behind this build's", arguments: StoreBackend.allCases)
    func schemaBehind(_ backend: StoreBackend) async throws {
        try await TestEnvironment.withApp(backend: backend) { environment, client in
            let latest = TesseraRelease.schemaVersion
            // The step before the latest (step numbers may skip one that another branch holds).
            let previous = try #require(SQLiteMigrations.all.dropLast().last).version
            try await Self.run("DELETE FROM schema_migrations WHERE version = \(latest)", on: environment.store)
            let ready = try await client.send(.get, "/health/ready")
            #expect(ready.status == .serviceUnavailable)
            #expect(ready.errorCode == "service_unavailable")
            let readiness = ready["error"]["readiness"] as? [String: Any] ?? [:]
            #expect(readiness["status"] as? String == "not_ready")
            #expect(
                readiness["checks"] as? [String: String] == [
                    "database": "ok", "migrations": "behind", "master_key": "ok",
                ])
            #expect(readiness["database_schema_version"] as? Int == Int(previous))
            #expect(readiness["schema_version"] as? Int == Int(latest))
            #expect(readiness["version"] as? String == TesseraRelease.version)
            let message = try #require(ready["error"]["message"] as? String)
            #expect(message.contains("version \(previous)") && message.contains("expects \(latest)"))
            let head = try await client.send(.head, "/health/ready")
            #expect(head.status == .serviceUnavailable)
            #expect(head.body.isEmpty)
            // Liveness asks nothing of the database.
            #expect(try await client.send(.get, "/health/live").status == .ok)
        }
    }

    @Test(
        "ready stays 200 beside a newer release's expand step, and is 503 once a contract step for a newer release ran",
        arguments: StoreBackend.allCases)
    func schemaAhead(_ backend: StoreBackend) async throws {
        try await TestEnvironment.withApp(backend: backend) { environment, client in
            let newer = TesseraRelease.schemaVersion + 1
            // An expand step of a newer release: this build still runs on the schema (a rolling upgrade).
            try await Self.run(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (\(newer), 0)", on: environment.store)
            let beside = try await client.send(.get, "/health/ready")
            #expect(beside.status == .ok)
            #expect(beside.json["database_schema_version"] as? Int == Int(newer))
            try await Self.run(
                "UPDATE schema_migrations SET kind = 'contract', required_release = '99.0.0' WHERE version = \(newer)",
                on: environment.store)
            let ready = try await client.send(.get, "/health/ready")
            #expect(ready.status == .serviceUnavailable)
            let readiness = ready["error"]["readiness"] as? [String: Any] ?? [:]
            #expect((readiness["checks"] as? [String: String])?["migrations"] == "ahead")
            #expect(readiness["database_schema_version"] as? Int == Int(newer))
            let message = ready["error"]["message"] as? String ?? ""
            #expect(message.contains("contracted for a newer release"))
            // Back at this build's version, the node is ready again.
            try await Self.run("DELETE FROM schema_migrations WHERE version = \(newer)", on: environment.store)
            #expect(try await client.send(.get, "/health/ready").status == .ok)
        }
    }

    @Test("ready and HEAD are 503 when PostgreSQL does not answer (a closed port); live stays 200")
    func databaseUnreachable() async throws {
        // Port 1 on loopback: nothing listens there (binding it needs privileges).
        let store = PostgresStore(
            configuration: try PostgresConfiguration(
                url: "postgres://tessera:secret@127.0.0.1:1/tessera?connect_timeout=1&operation_timeout=1"),
            masterKeys: TestMasterKeys.keyring)
        let core = TesseraCore(
            store: store, configuration: ServerConfiguration(), metrics: ServerMetrics(), masterKeyVerified: true)
        let app = Application(router: TesseraRouter.build(core: core))
        try await app.test(.router) { client in
            let ready = try await client.execute(uri: "/health/ready", method: .get)
            #expect(ready.status == .serviceUnavailable)
            let body = try #require(
                try JSONSerialization.jsonObject(with: Data(buffer: ready.body)) as? [String: Any])
            let error = body["error"] as? [String: Any] ?? [:]
            #expect(error["code"] as? String == "service_unavailable")
            #expect(error["message"] as? String == "Not ready: the database does not answer.")
            let readiness = error["readiness"] as? [String: Any] ?? [:]
            #expect(readiness["status"] as? String == "not_ready")
            #expect(
                readiness["checks"] as? [String: String] == [
                    "database": "unavailable", "migrations": "unknown", "master_key": "ok",
                ])
            #expect(readiness["database_schema_version"] is NSNull)
            let head = try await client.execute(uri: "/health/ready", method: .head)
            #expect(head.status == .serviceUnavailable)
            #expect(head.body.readableBytes == 0)
            let headV1 = try await client.execute(uri: "/health", method: .head)
            #expect(headV1.status == .serviceUnavailable)
            #expect(headV1.body.readableBytes == 0)
            #expect(try await client.execute(uri: "/health/live", method: .get).status == .ok)
            #expect(try await client.execute(uri: "/health/live", method: .head).status == .ok)
        }
        try await store.close()
    }

    @Test("ready is 503 when the master keys were not verified against the database")
    func masterKeyNotVerified() async throws {
        let environment = try await TestEnvironment.make(backend: .sqlite)
        let core = TesseraCore(
            store: environment.store, configuration: environment.configuration, metrics: ServerMetrics(),
            masterKeyVerified: false)
        let report = await core.readiness.check()
        #expect(report.masterKey == .unverified)
        #expect(report.failedChecks == ["master_key"])
        #expect(!report.isReady)
        #expect(report.message == "Not ready: the master key is not loaded.")
        #expect(Readiness.sealsAndOpens(TestMasterKeys.keyring))
        try await environment.store.close()
    }

    @Test("the schema version is the latest migration of both backends, and --version prints it")
    func versions() {
        #expect(TesseraRelease.schemaVersion == Int64(SQLiteMigrations.all.map(\.version).max() ?? -1))
        #expect(TesseraRelease.schemaVersion == PostgresMigrations.all.map(\.version).max())
        #expect(TesseraRelease.schemaVersion >= 10)
        #expect(TesseraRelease.description == "\(TesseraRelease.version) (schema \(TesseraRelease.schemaVersion))")
        // Semantic versioning, with an optional pre-release suffix.
        #expect(TesseraRelease.version.wholeMatch(of: /\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?/) != nil)
    }

    @Test("the drain delay: 5 s by default, TESSERA_DRAIN_SECONDS 0 to 300")
    func drainDelayConfiguration() throws {
        #expect(ServerConfiguration().drainDelay == .seconds(5))
        #expect(try ServerConfiguration.fromEnvironment(["TESSERA_DRAIN_SECONDS": "0"]).drainDelay == .zero)
        #expect(try ServerConfiguration.fromEnvironment(["TESSERA_DRAIN_SECONDS": "30"]).drainDelay == .seconds(30))
        for bad in ["-1", "301", "five"] {
            #expect(throws: ConfigurationError.self) {
                try ServerConfiguration.fromEnvironment(["TESSERA_DRAIN_SECONDS": bad])
            }
        }
    }

    /// Runs one statement on the store's database, outside the store's API.
    static func run(_ sql: String, on store: any TesseraStore) async throws {
        switch store {
        case let sqlite as SQLiteStore:
            try await sqlite.writer.write { connection in try connection.execute(sql) }
        case let postgres as PostgresStore:
            let logger = postgres.logger
            try await postgres.statement { client in
                _ = try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect()
            }
        default:
            Issue.record("no SQL for \(type(of: store))")
        }
    }
}

/// A node's graceful shutdown over real sockets: it answers not ready first, and finishes what is
/// in flight.
@Suite("Graceful shutdown drains the node")
struct DrainTests {
    @Test("on shutdown ready turns 503 while an in-flight request still completes")
    func readyTurnsFirst() async throws {
        let environment = try await TestEnvironment.make(backend: .sqlite)
        let sqlite = try #require(environment.store as? SQLiteStore)
        let (ports, port) = AsyncStream.makeStream(of: Int.self)
        var node = try await makeNode(configuration: environment.configuration, store: environment.store) { channel in
            port.yield(channel.localAddress?.port ?? 0)
        }
        // The drain's delay lasts until the test lets it go.
        let (entered, enter) = AsyncStream.makeStream(of: Void.self)
        let (releases, release) = AsyncStream.makeStream(of: Void.self)
        node.drain.wait = { _ in
            enter.yield()
            for await _ in releases { return }
        }
        let group = ServiceGroup(configuration: .init(services: [node], logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        var portIterator = ports.makeAsyncIterator()
        let listening = try #require(await portIterator.next())

        // An anonymous start queued behind a held SQLite writer: in flight until the writer is released.
        let writerRelease = DispatchSemaphore(value: 0)
        let (holding, holds) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await sqlite.writer.write { _ in
                holds.yield()
                writerRelease.wait()
            }
        }
        var holdingIterator = holding.makeAsyncIterator()
        _ = await holdingIterator.next()
        let inFlight = TestClient(host: "127.0.0.1", port: listening)
        inFlight.connect()
        let installation =
            #"{"installation_id":"\#(UUID().uuidString.lowercased())","installation_secret":"\#(OpaqueToken.installationSecret())"}"#
        let started = Task {
            try await inFlight.execute(
                Self.request(
                    .post, "/v1/sessions/anonymous",
                    headers: [
                        .authorization: "Bearer \(environment.project.publishableKey)",
                        .contentType: "application/json",
                    ],
                    body: ByteBuffer(string: installation)))
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while sqlite.writer.queuedJobs < 1 && ContinuousClock.now < deadline { await Task.yield() }
        #expect(sqlite.writer.queuedJobs >= 1, "the anonymous start waits for the writer")

        await group.triggerGracefulShutdown()
        var enteredIterator = entered.makeAsyncIterator()
        _ = await enteredIterator.next()

        // Draining: a new connection is still accepted; ready says 503, live 200.
        try await TestClient.withClient(host: "127.0.0.1", port: listening) { probe in
            let ready = try await probe.execute(Self.request(.get, "/health/ready"))
            #expect(ready.status == .serviceUnavailable)
            let body = try #require(
                try JSONSerialization.jsonObject(with: Data(buffer: ready.body ?? ByteBuffer())) as? [String: Any])
            let error = body["error"] as? [String: Any] ?? [:]
            #expect(error["code"] as? String == "service_unavailable")
            let readiness = error["readiness"] as? [String: Any] ?? [:]
            #expect(readiness["status"] as? String == "draining")
            #expect(readiness["draining"] as? Bool == true)
            #expect(try await probe.execute(Self.request(.head, "/health/ready")).status == .serviceUnavailable)
            #expect(try await probe.execute(Self.request(.get, "/health/live")).status == .ok)
        }
        let activity = node.activity
        #expect(activity.isDraining)
        #expect(activity.drainStarted?.requests == 1, "the anonymous start was in flight when the drain began")

        // The in-flight request completes with its answer.
        writerRelease.signal()
        try await holder.value
        let answer = try await started.value
        #expect(answer.status == .created)
        try await inFlight.shutdown()

        // The drain ends, the listener closes, the node stops.
        release.yield()
        try await running.value
        #expect(activity.requestsInFlight == 0)
        // The store was closed after the server: nothing is served any more.
        await #expect(throws: (any Error).self) {
            _ = try await ProjectProvisioner.create(name: "After", store: environment.store)
        }
    }
}

extension DrainTests {
    /// A request with a `Host` (the server refuses HTTP/1.1 without one).
    static func request(
        _ method: HTTPRequest.Method, _ path: String, headers: HTTPFields = [:], body: ByteBuffer? = nil
    ) -> TestClient.Request {
        TestClient.Request(path, method: method, authority: "127.0.0.1", headers: headers, body: body)
    }
}

/// The webhook dispatcher on a graceful shutdown: the deliveries in flight finish and are recorded.
@Suite("Graceful shutdown finishes webhook deliveries")
struct DeliveryDrainTests {
    /// A transport whose sends wait until the test lets them answer.
    final class HeldTransport: Sendable {
        let (sending, sendingSignal) = AsyncStream.makeStream(of: Void.self)
        let (released, release) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

        var transport: WebhookDispatcher.Transport {
            { _, _, _ in
                self.sendingSignal.yield()
                for await _ in self.released { break }
                return WebhookOutcome(kind: .delivered, statusCode: 200, durationMilliseconds: 1)
            }
        }
    }

    /// Runs a dispatcher until its first send is under way, shuts it down gracefully, lets the send
    /// answer, and returns the states of the webhook's deliveries once the dispatcher stopped.
    func shutDownDuringASend(grace: Duration) async throws -> (states: [WebhookDeliveryRecord.State], inFlight: Int) {
        let environment = try await TestEnvironment.make()
        // Its own `webhook.created` is the first event it is sent.
        let webhook = try await environment.storeWebhook()
        let held = HeldTransport()
        let activity = NodeActivity()
        let clock = environment.clock
        var dispatcher = WebhookDispatcher(
            store: environment.store, transport: held.transport, now: { clock.now }, activity: activity,
            logger: Logger(label: "test"))
        dispatcher.shutdownGrace = grace
        let group = ServiceGroup(configuration: .init(services: [dispatcher], logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        var sending = held.sending.makeAsyncIterator()
        _ = await sending.next()
        let inFlight = activity.deliveriesInFlight
        await group.triggerGracefulShutdown()
        if grace > .zero {
            held.release.yield()
        }
        try await running.value
        let deliveries = try await environment.store.webhookDeliveries(
            projectID: environment.project.project.id, webhookID: webhook.id, state: nil, before: nil, limit: 10)
        try await environment.store.close()
        return (deliveries.map(\.state), inFlight)
    }

    @Test("a delivery under way when the shutdown starts is answered and recorded")
    func finished() async throws {
        let (states, inFlight) = try await shutDownDuringASend(grace: .seconds(60))
        #expect(inFlight == 1, "the drain's log counts the delivery in flight")
        #expect(states == [.delivered])
    }

    @Test("past the grace the attempt is dropped unrecorded, for its lease to expire")
    func dropped() async throws {
        let (states, _) = try await shutDownDuringASend(grace: .zero)
        #expect(states == [.pending])
    }
}
