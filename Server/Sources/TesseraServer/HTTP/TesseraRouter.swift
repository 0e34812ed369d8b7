import HTTPTypes
import Hummingbird

/// Builds the router: every endpoint of the API behind ``TesseraMiddleware``.
enum TesseraRouter {
    static func build(api: TesseraAPI) -> Router<TesseraRequestContext> {
        var table = RouteTable()
        let limiter = RateLimiter(store: api.store, configuration: api.configuration)
        let endpoints:
            [(HTTPRequest.Method, String, @Sendable (Request, TesseraRequestContext) async throws -> Response)] = [
                (
                    .post, "/v1/sessions/anonymous",
                    { request, context in try await api.startAnonymous(request, limiter: limiter, context: context) }
                ),
                (
                    .post, "/v1/sessions/identify",
                    { request, context in try await api.identify(request, limiter: limiter, context: context) }
                ),
                (.post, "/v1/sessions/authenticate", { request, _ in try await api.authenticate(request) }),
                (.post, "/v1/sessions/revoke", { request, _ in try await api.revoke(request) }),
                (.get, "/v1/sessions", { request, _ in try await api.listSessions(request) }),
                (
                    .delete, "/v1/sessions/:session_id",
                    { request, context in
                        try await api.deleteSession(request, sessionID: try context.parameters.require("session_id"))
                    }
                ),
                (.get, "/v1/me", { request, _ in try await api.me(request) }),
                (.post, "/v1/devices", { request, _ in try await api.registerDevice(request) }),
                (
                    .delete, "/v1/devices/:device_id",
                    { request, context in
                        try await api.deleteDevice(request, deviceID: try context.parameters.require("device_id"))
                    }
                ),
                (.get, "/v1/admin/profiles", { request, _ in try await api.adminFindProfiles(request) }),
                (
                    .get, "/v1/admin/profiles/:profile_id",
                    { request, context in
                        try await api.adminGetProfile(request, profileID: try context.parameters.require("profile_id"))
                    }
                ),
                (
                    .delete, "/v1/admin/profiles/:profile_id",
                    { request, context in
                        try await api.adminEraseProfile(
                            request, profileID: try context.parameters.require("profile_id"))
                    }
                ),
                (
                    .get, "/v1/admin/profiles/:profile_id/sessions",
                    { request, context in
                        try await api.adminListSessions(
                            request, profileID: try context.parameters.require("profile_id"))
                    }
                ),
                (
                    .post, "/v1/admin/profiles/:profile_id/sessions/revoke",
                    { request, context in
                        try await api.adminRevokeSessions(
                            request, profileID: try context.parameters.require("profile_id"))
                    }
                ),
                (
                    .get, "/v1/admin/profiles/:profile_id/devices",
                    { request, context in
                        try await api.adminListDevices(request, profileID: try context.parameters.require("profile_id"))
                    }
                ),
                (.get, "/v1/admin/project", { request, _ in try await api.adminGetProject(request) }),
                (.patch, "/v1/admin/project", { request, _ in try await api.adminUpdateProject(request) }),
                (
                    .post, "/v1/admin/identity-secrets",
                    { request, _ in try await api.adminCreateIdentitySecret(request) }
                ),
                (
                    .delete, "/v1/admin/identity-secrets/:kid",
                    { request, context in
                        try await api.adminDeleteIdentitySecret(request, kid: try context.parameters.require("kid"))
                    }
                ),
                (.get, "/v1/admin/identity-secrets", { request, _ in try await api.adminListIdentitySecrets(request) }),
                (.post, "/v1/admin/sessions/introspect", { request, _ in try await api.adminIntrospect(request) }),
                (
                    .delete, "/v1/admin/sessions/:session_id",
                    { request, context in
                        try await api.adminDeleteSession(
                            request, sessionID: try context.parameters.require("session_id"))
                    }
                ),
                (
                    .post, "/v1/admin/profiles/:profile_id/block",
                    { request, context in
                        try await api.adminBlockProfile(
                            request, profileID: try context.parameters.require("profile_id"))
                    }
                ),
                (
                    .post, "/v1/admin/profiles/:profile_id/unblock",
                    { request, context in
                        try await api.adminUnblockProfile(
                            request, profileID: try context.parameters.require("profile_id"))
                    }
                ),
                (.get, "/v1/admin/signing-keys", { request, _ in try await api.adminListSigningKeys(request) }),
                (
                    .post, "/v1/admin/signing-keys/rotate",
                    { request, _ in try await api.adminRotateSigningKey(request) }
                ),
                (.post, "/v1/admin/api-keys/rotate", { request, _ in try await api.adminRotateAPIKey(request) }),
                (
                    .get, "/v1/projects/:project_id/jwks.json",
                    { request, context in
                        try await api.jwks(request, projectID: try context.parameters.require("project_id"))
                    }
                ),
                (.get, "/health", { request, _ in try await api.health(request) }),
                (.get, "/metrics", { request, _ in api.metricsExposition(request) }),
                (.get, "/openapi.json", { request, _ in api.openAPI(request) }),
            ]
        for (method, path, _) in endpoints { table.add(method, path) }
        let router = Router(context: TesseraRequestContext.self)
        router.add(
            middleware: TesseraMiddleware(
                routes: table, metrics: api.metrics, maximumBodySize: api.configuration.maximumBodySize,
                rateLimiter: limiter, addresses: api.addresses))
        for (method, path, handler) in endpoints {
            router.on(RouterPath(path), method: method) { request, context in try await handler(request, context) }
        }
        return router
    }
}
