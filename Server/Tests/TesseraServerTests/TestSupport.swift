import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import TesseraTokens
import Testing

@testable import TesseraServer

/// A clock tests move by hand.
final class TestClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_795_000_000)) {
        current = Mutex(start)
    }

    var now: Date { current.withLock { $0 } }
    var seconds: Int64 { Int64(now.timeIntervalSince1970) }

    func advance(seconds: Double) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}

/// The master keys of the tests' stores: one for the whole run, so stores opened on one database
/// (two nodes, a reopened file) open each other's sealed values.
enum TestMasterKeys {
    static let keyring = MasterKeyring(current: .generate())
}

/// The storage backends every storage test runs against (PostgreSQL joins this list).
enum StoreBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    /// SQLite always; PostgreSQL too when `TESSERA_TEST_POSTGRES_URL` names a server.
    static var allCases: [StoreBackend] { PostgresTestDatabase.isConfigured ? [.sqlite, .postgres] : [.sqlite] }

    var testDescription: String { rawValue }

    func makeStore() throws -> any TesseraStore {
        switch self {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "tessera-tests-\(UUID().uuidString)")
            return try SQLiteStore(
                path: directory.appendingPathComponent("test.sqlite").path, masterKeys: TestMasterKeys.keyring)
        case .postgres:
            return try PostgresTestDatabase.makeStore()
        }
    }
}

/// A store, a clock and one project, ready for tests.
struct TestEnvironment: Sendable {
    let store: any TesseraStore
    let clock: TestClock
    let project: ProvisionedProject
    let configuration: ServerConfiguration

    static func make(
        backend: StoreBackend = .selected, settings: ProjectSettings = ProjectSettings(),
        store given: (any TesseraStore)? = nil, configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestEnvironment {
        let store = try given ?? backend.makeStore()
        try await store.migrate()
        let clock = TestClock()
        let project = try await ProjectProvisioner.create(
            name: "Test App", slug: "test-app-\(UUID().uuidString.prefix(8).lowercased())", settings: settings,
            store: store, now: clock.now)
        var configuration = ServerConfiguration()
        configuration.now = { clock.now }
        configuration.port = 0
        configuration.createDevelopmentProject = false
        configuration.logLevel = .critical
        configuration.publicURL = "https://tessera.test"
        // The webhook tests drive a dispatcher of their own, with an injected transport and clock.
        configuration.deliverWebhooks = false
        // Operators' passwords: bcrypt's cheapest cost, so console tests sign in quickly.
        configuration.operatorPasswordCost = 4
        configure(&configuration)
        return TestEnvironment(store: store, clock: clock, project: project, configuration: configuration)
    }

    /// Makes an environment (as ``make(backend:settings:store:configure:)``) and runs `body` against its
    /// application, with the environment.
    static func withApp(
        backend: StoreBackend = .selected, settings: ProjectSettings = ProjectSettings(),
        store given: (any TesseraStore)? = nil, configure: (inout ServerConfiguration) -> Void = { _ in },
        _ setup: TestingSetup = .router, _ body: @escaping @Sendable (TestEnvironment, APIClient) async throws -> Void
    ) async throws {
        let environment = try await make(backend: backend, settings: settings, store: given, configure: configure)
        try await environment.withApp(setup) { client in try await body(environment, client) }
    }

    /// Another project in the same store.
    func makeOtherProject(settings: ProjectSettings = ProjectSettings()) async throws -> ProvisionedProject {
        try await ProjectProvisioner.create(
            name: "Other App", slug: "other-\(UUID().uuidString.prefix(8).lowercased())", settings: settings,
            store: store,
            now: clock.now)
    }

    /// Runs `body` against the application.
    func withApp(_ setup: TestingSetup = .router, _ body: @escaping @Sendable (APIClient) async throws -> Void)
        async throws
    {
        let app = try await buildApplication(configuration: configuration, store: store)
        try await app.test(setup) { client in
            try await body(APIClient(client: client, environment: self))
        }
    }

    /// A signed identity token of this project.
    func identityToken(
        sub: String, lifetime: Double = 300, jti: String? = nil, audience: [String] = [], name: String? = nil,
        email: String? = nil, avatarURL: String? = nil, issuedAt: Date? = nil, secret: IdentitySecret? = nil
    ) -> String {
        let now = clock.now
        let claims = IdentityClaims(
            subject: sub, expiration: now.addingTimeInterval(lifetime), audience: audience, issuedAt: issuedAt ?? now,
            tokenID: jti, name: name, avatarURL: avatarURL, email: email)
        return IdentityTokenMinter(secret: secret ?? project.identitySecret).mint(claims)
    }
}

/// A new, empty directory `tessera-NAME-UUID` under the system's temporary one; answers its path.
func newTemporaryDirectory(_ name: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(name)-\(UUID())").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// The answer to one request.
struct Reply: Sendable {
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let body: [UInt8]

    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }

    var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }

    subscript(_ key: String) -> [String: Any] { json[key] as? [String: Any] ?? [:] }

    var sessionToken: String? { json["session_token"] as? String }
    var sessionJWT: String? { json["session_jwt"] as? String }
    var sessionID: String? { self["session"]["id"] as? String }
    var profileID: String? { self["profile"]["id"] as? String }
}

/// A little client over HummingbirdTesting's.
struct APIClient: Sendable {
    let client: any TestClientProtocol
    let environment: TestEnvironment

    var publishableKey: String { environment.project.publishableKey }
    var secretKey: String { environment.project.secretKey }

    @discardableResult
    func send(
        _ method: HTTPRequest.Method, _ path: String, bearer: String? = nil, body: String? = nil,
        headers extra: HTTPFields = [:]
    ) async throws -> Reply {
        var headers = extra
        if let bearer { headers[.authorization] = "Bearer \(bearer)" }
        if body != nil { headers[.contentType] = "application/json" }
        return try await client.execute(
            uri: path, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }
        ) { response in
            Reply(status: response.status, headers: response.headers, body: Array(buffer: response.body))
        }
    }

    /// Starts an anonymous session for a new installation, asking for `minutes` of session if given.
    func anonymous(
        installationID: String = UUID().uuidString.lowercased(), secret: String? = nil, minutes: Int? = nil
    ) async throws -> Reply {
        let secret = secret ?? OpaqueToken.installationSecret()
        let duration = minutes.map { #","session_duration_minutes":\#($0)"# } ?? ""
        return try await send(
            .post, "/v1/sessions/anonymous", bearer: publishableKey,
            body: #"{"installation_id":"\#(installationID)","installation_secret":"\#(secret)"\#(duration)}"#)
    }

    /// Starts an anonymous session for a new installation, then restores that installation (its ID
    /// and secret) once more: two live sessions of one profile, the first created, the second restored.
    func anonymousTwice() async throws -> (first: Reply, second: Reply) {
        let installationID = UUID().uuidString.lowercased()
        let secret = OpaqueToken.installationSecret()
        let first = try await anonymous(installationID: installationID, secret: secret)
        return (first, try await anonymous(installationID: installationID, secret: secret))
    }

    /// A request with the secret key.
    @discardableResult
    func admin(_ method: HTTPRequest.Method, _ path: String, body: String? = nil) async throws -> Reply {
        try await send(method, path, bearer: secretKey, body: body)
    }

    /// `GET /v1/admin/profiles/{id}/devices` or `…/sessions` (`list`) with the secret key: the list the
    /// answer holds under that name, or nil if it holds none.
    func adminList(_ list: String, of profileID: String?) async throws -> [[String: Any]]? {
        let reply = try await send(
            .get, "/v1/admin/profiles/\(try #require(profileID))/\(list)", bearer: secretKey)
        return reply.json[list] as? [[String: Any]]
    }

    /// `POST /v1/devices` of a push token, with `bearer` (a session credential).
    @discardableResult
    func registerDevice(bearer: String?, platform: String, token: String) async throws -> Reply {
        try await send(
            .post, "/v1/devices", bearer: bearer, body: #"{"platform":"\#(platform)","token":"\#(token)"}"#)
    }

    /// `PATCH /v1/admin/project` turning `allow_unverified_identify` on, with the secret key.
    @discardableResult
    func allowUnverifiedIdentify() async throws -> Reply {
        try await send(.patch, "/v1/admin/project", bearer: secretKey, body: #"{"allow_unverified_identify":true}"#)
    }

    /// Identifies in the unverified form (`{"user_id": …}`), with `bearer` (the publishable key by default).
    func identify(userID: String, bearer: String? = nil) async throws -> Reply {
        try await send(
            .post, "/v1/sessions/identify", bearer: bearer ?? publishableKey, body: #"{"user_id":"\#(userID)"}"#)
    }

    /// Identifies as `sub` with a fresh identity token of the project, using `bearer` (the publishable
    /// key by default).
    func identify(sub: String, bearer: String? = nil, extra: String = "") async throws -> Reply {
        try await identify(token: environment.identityToken(sub: sub), bearer: bearer, extra: extra)
    }

    /// Identifies with a signed token, using `bearer` (the publishable key by default).
    func identify(token: String, bearer: String? = nil, extra: String = "") async throws -> Reply {
        try await send(
            .post, "/v1/sessions/identify", bearer: bearer ?? publishableKey,
            body: #"{"identity_token":"\#(token)"\#(extra)}"#)
    }
}
