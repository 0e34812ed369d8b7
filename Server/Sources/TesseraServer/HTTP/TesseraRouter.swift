import Hummingbird

/// Builds the router: the endpoints of ``EndpointTable``, each behind an ``Authenticator`` for the
/// credential it accepts, all behind ``TesseraMiddleware``.
enum TesseraRouter {
    static func build(core: TesseraCore) -> Router<TesseraRequestContext> {
        let addresses = ClientAddressReader(configuration: core.configuration)
        let endpoints = EndpointTable.endpoints(core: core, addresses: addresses)
        let router = Router(context: TesseraRequestContext.self)
        // Added first: Hummingbird wraps each route in the middleware added before it.
        router.add(
            middleware: TesseraMiddleware(
                routes: RouteTable(endpoints), metrics: core.metrics,
                maximumBodySize: core.configuration.maximumBodySize, rateLimiter: core.rateLimiter,
                addresses: addresses))
        for endpoint in endpoints {
            let authenticator = Authenticator(
                accepts: endpoint.accepts, credentials: core.credentials, rateLimiter: core.rateLimiter,
                addresses: addresses)
            router.on(
                RouterPath(endpoint.path), method: endpoint.method, use: authenticator.responder(for: endpoint.handler))
        }
        return router
    }
}
