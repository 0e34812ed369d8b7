/// The one endpoint table: every route of the API, the credential it accepts, and the controller
/// method that answers it.
///
/// ``TesseraRouter`` registers it, each route behind an ``Authenticator`` for its credential, and
/// makes the 404/405 table (``RouteTable``) from it.
enum EndpointTable {
    static func endpoints(core: TesseraCore, addresses: ClientAddressReader) -> [Endpoint] {
        let bodies = BodyReader(maximumBodySize: core.configuration.maximumBodySize)
        let sessions = SessionsController(core: core, bodies: bodies, addresses: addresses)
        let me = MeController(core: core, bodies: bodies, addresses: addresses)
        let admin = AdminController(core: core, bodies: bodies, addresses: addresses)
        let operations = OperationsController(core: core)
        let webhooks = WebhooksController(core: core, bodies: bodies, addresses: addresses)
        return [
            Endpoint(.post, "/v1/sessions/anonymous", accepts: .publishableKey, sessions.startAnonymous),
            Endpoint(
                .post, "/v1/attestations/challenge", accepts: .publishableKey, sessions.attestationChallenge),
            Endpoint(
                .post, "/v1/sessions/identify", accepts: .publishableKeyOrSession, spendsProof: true, sessions.identify),
            // An extension's proof is spent in the handler (SessionsController.authenticate); a heartbeat writes nothing.
            Endpoint(.post, "/v1/sessions/authenticate", accepts: .sessionOrExpiredJWT, sessions.authenticate),
            Endpoint(.post, "/v1/sessions/revoke", accepts: .session, spendsProof: true, sessions.revoke),
            Endpoint(
                .post, "/v1/sessions/revoke-others", accepts: .session, spendsProof: true, sessions.revokeOthers),
            Endpoint(.get, "/v1/sessions", accepts: .session, sessions.listSessions),
            Endpoint(.delete, "/v1/sessions/:session_id", accepts: .session, spendsProof: true, sessions.deleteSession),
            Endpoint(.get, "/v1/me", accepts: .session, me.me),
            Endpoint(.post, "/v1/devices", accepts: .session, spendsProof: true, me.registerDevice),
            Endpoint(.delete, "/v1/devices/:device_id", accepts: .session, spendsProof: true, me.deleteDevice),
            Endpoint(.get, "/v1/admin/profiles", accepts: .secretKey, admin.findProfiles),
            Endpoint(.get, "/v1/admin/profiles/:profile_id", accepts: .secretKey, admin.getProfile),
            Endpoint(.delete, "/v1/admin/profiles/:profile_id", accepts: .secretKey, admin.eraseProfile),
            Endpoint(.get, "/v1/admin/profiles/:profile_id/sessions", accepts: .secretKey, admin.listSessions),
            Endpoint(
                .post, "/v1/admin/profiles/:profile_id/sessions/revoke", accepts: .secretKey, admin.revokeSessions),
            Endpoint(.get, "/v1/admin/profiles/:profile_id/devices", accepts: .secretKey, admin.listDevices),
            Endpoint(.get, "/v1/admin/profiles/:profile_id/aliases", accepts: .secretKey, admin.listAliases),
            Endpoint(.get, "/v1/admin/lookup", accepts: .secretKey, admin.lookup),
            Endpoint(.get, "/v1/admin/project", accepts: .secretKey, admin.getProject),
            Endpoint(.patch, "/v1/admin/project", accepts: .secretKey, admin.updateProject),
            Endpoint(.post, "/v1/admin/identity-secrets", accepts: .secretKey, admin.createIdentitySecret),
            Endpoint(.delete, "/v1/admin/identity-secrets/:kid", accepts: .secretKey, admin.deleteIdentitySecret),
            Endpoint(.get, "/v1/admin/identity-secrets", accepts: .secretKey, admin.listIdentitySecrets),
            Endpoint(.post, "/v1/admin/sessions/introspect", accepts: .secretKey, admin.introspect),
            Endpoint(.delete, "/v1/admin/sessions/:session_id", accepts: .secretKey, admin.deleteSession),
            Endpoint(.post, "/v1/admin/profiles/:profile_id/block", accepts: .secretKey, admin.blockProfile),
            Endpoint(.post, "/v1/admin/profiles/:profile_id/unblock", accepts: .secretKey, admin.unblockProfile),
            Endpoint(.get, "/v1/admin/signing-keys", accepts: .secretKey, admin.listSigningKeys),
            Endpoint(.post, "/v1/admin/signing-keys/rotate", accepts: .secretKey, admin.rotateSigningKey),
            Endpoint(.post, "/v1/admin/api-keys/rotate", accepts: .secretKey, admin.rotateAPIKey),
            Endpoint(.get, "/v1/admin/events", accepts: .secretKey, admin.listEvents),
            Endpoint(.get, "/v1/admin/audit", accepts: .secretKey, admin.listAudit),
            Endpoint(.post, "/v1/admin/webhooks", accepts: .secretKey, webhooks.create),
            Endpoint(.get, "/v1/admin/webhooks", accepts: .secretKey, webhooks.list),
            Endpoint(.get, "/v1/admin/webhooks/:webhook_id", accepts: .secretKey, webhooks.get),
            Endpoint(.patch, "/v1/admin/webhooks/:webhook_id", accepts: .secretKey, webhooks.update),
            Endpoint(.delete, "/v1/admin/webhooks/:webhook_id", accepts: .secretKey, webhooks.delete),
            Endpoint(.post, "/v1/admin/webhooks/:webhook_id/rotate-secret", accepts: .secretKey, webhooks.rotateSecret),
            Endpoint(.get, "/v1/admin/webhooks/:webhook_id/deliveries", accepts: .secretKey, webhooks.deliveries),
            Endpoint(.post, "/v1/admin/webhooks/:webhook_id/replay", accepts: .secretKey, webhooks.replay),
            Endpoint(.post, "/v1/admin/webhooks/:webhook_id/test", accepts: .secretKey, webhooks.test),
            Endpoint(.get, "/v1/projects/:project_id/jwks.json", accepts: .none, operations.jwks),
            Endpoint(.get, "/health", accepts: .none, operations.health),
            Endpoint(.head, "/health", accepts: .none, OperationsController.head(operations.health)),
            Endpoint(.get, "/health/live", accepts: .none, operations.live),
            Endpoint(.head, "/health/live", accepts: .none, OperationsController.head(operations.live)),
            Endpoint(.get, "/health/ready", accepts: .none, operations.ready),
            Endpoint(.head, "/health/ready", accepts: .none, OperationsController.head(operations.ready)),
            Endpoint(.get, "/metrics", accepts: .none, operations.metricsExposition),
            Endpoint(.get, "/openapi.json", accepts: .none, operations.openAPI),
            Endpoint(.head, "/openapi.json", accepts: .none, OperationsController.head(operations.openAPI)),
        ]
    }
}
