import Foundation
import HTTPTypes
import HummingbirdTesting
import Synchronization
import TesseraTokens
import Testing

@testable import TesseraServer

@Suite("Live server (real sockets)")
struct LiveServerTests {
    @Test("Headers over a real socket: X-Request-Id, JSON content type, Date")
    func headers() async throws {
        try await TestEnvironment.withApp(.live) { environment, client in
            let reply = try await client.anonymous()
            #expect(reply.status == .created)
            #expect(reply.headers[.xRequestID]?.isEmpty == false)
            #expect(reply.headers[.contentType] == "application/json; charset=utf-8")
            #expect(reply.headers[.date] != nil)
            let missing = try await client.send(.get, "/missing")
            #expect(missing.status == .notFound)
            #expect(missing.errorCode == "not_found")
            #expect(missing.headers[.xRequestID]?.isEmpty == false)
        }
    }

    @Test("The 16 KiB body cap over a real socket")
    func bodyLimit() async throws {
        try await TestEnvironment.withApp(.live) { environment, client in
            let session = try await client.anonymous()
            let big = String(repeating: "x", count: 20 * 1024)
            let reply = try await client.send(
                .post, "/v1/devices", bearer: session.sessionToken, body: #"{"platform":"apns","token":"\#(big)"}"#)
            #expect(reply.status == .contentTooLarge)
            #expect(reply.errorCode == "payload_too_large")
            #expect(reply.headers[.xRequestID] != nil)
            let after = try await client.send(.get, "/v1/me", bearer: session.sessionToken)
            #expect(after.status == .ok)
        }
    }

    @Test("Graceful shutdown finishes the server and then closes the store")
    func gracefulShutdown() async throws {
        let environment = try await TestEnvironment.make()
        try await environment.withApp(.live) { client in
            let health = try await client.send(.get, "/health")
            #expect(health.status == .ok)
        }
        // The test framework triggered graceful shutdown and waited for every service: the store is closed.
        await #expect(throws: (any Error).self) {
            _ = try await ProjectProvisioner.create(name: "After", store: environment.store)
        }
    }
}

@Suite("Configuration and CLI helpers")
struct ConfigurationTests {
    @Test("Database URLs")
    func databaseURLs() throws {
        #expect(try DatabaseURL("sqlite:data/x.sqlite") == .sqlite(path: "data/x.sqlite"))
        #expect(try DatabaseURL("sqlite:///tmp/x.sqlite") == .sqlite(path: "/tmp/x.sqlite"))
        #expect(try DatabaseURL("postgres://u:p@h/db") == .postgres(url: "postgres://u:p@h/db"))
        #expect(try DatabaseURL("postgres://u:secret@h/db").description.contains("secret") == false)
        #expect(throws: ConfigurationError.self) { try DatabaseURL("mysql://x") }
        #expect(throws: ConfigurationError.self) { try DatabaseURL("sqlite:") }
    }

    @Test("TESSERA_* environment variables")
    func environment() throws {
        let configuration = try ServerConfiguration.fromEnvironment([
            "TESSERA_HOST": "0.0.0.0", "TESSERA_PORT": "9090", "TESSERA_DATABASE_URL": "sqlite:/tmp/t.sqlite",
            "TESSERA_LOG_LEVEL": "DEBUG",
        ])
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 9090)
        #expect(configuration.database == .sqlite(path: "/tmp/t.sqlite"))
        #expect(configuration.logLevel == .debug)
        #expect(configuration.issuer == "http://0.0.0.0:9090")
        let defaults = try ServerConfiguration.fromEnvironment([:])
        #expect(defaults.host == "127.0.0.1")
        #expect(defaults.port == 8080)
        #expect(defaults.database == .sqlite(path: ".tessera/tessera.sqlite"))
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.fromEnvironment(["TESSERA_PORT": "x"]) }
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration.fromEnvironment(["TESSERA_LOG_LEVEL": "loud"])
        }
        let withURL = try ServerConfiguration.fromEnvironment(["TESSERA_PUBLIC_URL": "https://auth.example.com/"])
        #expect(withURL.issuer == "https://auth.example.com")
    }

    @Test("Slugs are derived from names")
    func slugs() {
        #expect(ProjectProvisioner.derivedSlug("My Great App!") == "my-great-app")
        #expect(ProjectProvisioner.derivedSlug("ÄÖÜ") == "project")
    }

    @Test("An empty database gets a development project, announced once")
    func developmentProject() async throws {
        let store = try StoreBackend.sqlite.makeStore()
        let announcements = AnnouncementLog()
        var configuration = ServerConfiguration()
        configuration.announce = { announcements.append($0) }
        configuration.logLevel = .critical
        _ = try await buildApplication(configuration: configuration, store: store)
        _ = try await buildApplication(configuration: configuration, store: store)
        let lines = announcements.all
        #expect(lines.count == 1)
        #expect(lines.first?.contains("pk_") == true)
        #expect(lines.first?.contains("sk_") == true)
        #expect(lines.first?.contains("tis_") == true)
        #expect(try await store.projectCount() == 1)
        try await store.close()
    }

    @Test("The cleanup service deletes what expired, judged by the injected clock")
    func cleanupService() async throws {
        try await TestEnvironment.withApp { environment, client in
            let short = try await client.anonymous(minutes: 5)
            let long = try await client.anonymous()
            let service = CleanupService(
                store: environment.store, interval: .seconds(60), batchSize: 1, now: { environment.clock.now },
                logger: .init(label: "test"))
            await service.runOnce()
            #expect(try await environment.store.sessionContext(sessionID: try #require(short.sessionID)) != nil)
            environment.clock.advance(seconds: 301)
            await service.runOnce()
            #expect(try await environment.store.sessionContext(sessionID: try #require(short.sessionID)) == nil)
            #expect(try await environment.store.sessionContext(sessionID: try #require(long.sessionID)) != nil)
        }
    }
}

/// Collects announcements from any thread.
final class AnnouncementLog: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}
