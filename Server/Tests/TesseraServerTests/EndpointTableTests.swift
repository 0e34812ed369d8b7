import HTTPTypes
import Hummingbird
import Testing

@testable import TesseraServer

/// The endpoint table is the one list of routes: the router registers exactly it, and the 404/405
/// table is made from it.
@Suite("Endpoint table: the router's routes, their credentials, and 405's Allow")
struct EndpointTableTests {
    @Test("The router registers exactly the endpoint table; every /v1 route but JWKS names a credential")
    func routerMatchesTable() async throws {
        // The router, not the store, is under test: SQLite, so no PostgreSQL pool is left open.
        let environment = try await TestEnvironment.make(backend: .sqlite)
        let core = TesseraCore(
            store: environment.store, configuration: environment.configuration, metrics: ServerMetrics())
        let endpoints = EndpointTable.endpoints(
            core: core, addresses: ClientAddressReader(configuration: environment.configuration))
        let router = TesseraRouter.build(core: core)
        // Hummingbird describes a capture `:name` as `{name}`.
        let table = Set(
            endpoints.map { endpoint in
                let path = endpoint.path.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : $0 }
                return "\(endpoint.method) /\(path.joined(separator: "/"))"
            })
        #expect(
            endpoints.count == 52,
            """
            32 before the audit log, the six webhook endpoints and the three delivery endpoints of issue 15, \
            lookup and aliases of issue 16, live, ready and three HEADs of issue 29, revoke-others of issue 27, \
            the App Attest challenge of issue 28, HEAD /openapi.json of issue 25
            """)
        #expect(table.count == endpoints.count, "no route is listed twice")
        // The console's pages are registered beside the table (they authenticate operators by cookie).
        #expect(Set(router.routes.map(\.description).filter { !$0.contains(" /console") }) == table)
        for endpoint in endpoints where endpoint.path.hasPrefix("/v1/") && !endpoint.path.hasSuffix("/jwks.json") {
            #expect(endpoint.accepts != .none, "\(endpoint.method) \(endpoint.path)")
        }
    }

    @Test("The 404/405 table answers every method of a path, in the table's order")
    func allowedMethods() {
        let handler: Endpoint.Handler = { _, _ in Response(status: .ok) }
        let routes = RouteTable([
            Endpoint(.get, "/v1/admin/project", accepts: .secretKey, handler),
            Endpoint(.patch, "/v1/admin/project", accepts: .secretKey, handler),
            Endpoint(.delete, "/v1/sessions/:session_id", accepts: .session, handler),
            Endpoint(.get, "/v1/sessions/current", accepts: .session, handler),
        ])
        #expect(routes.allowedMethods(for: "/v1/admin/project") == [.get, .patch])
        #expect(routes.allowedMethods(for: "/v1/sessions/ses_1") == [.delete])
        // A literal segment beats a capture.
        #expect(routes.allowedMethods(for: "/v1/sessions/current") == [.get])
        #expect(routes.allowedMethods(for: "/v1/nothing").isEmpty)
    }
}
