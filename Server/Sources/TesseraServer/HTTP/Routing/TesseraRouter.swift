import Hummingbird

/// Builds the router: the endpoints of ``EndpointTable``, each behind an ``Authenticator`` for the
/// credential it accepts, and the operator console's pages (unless turned off), all behind
/// ``TesseraMiddleware``.
enum TesseraRouter {
    static func build(core: TesseraCore) -> Router<TesseraRequestContext> {
        let addresses = ClientAddressReader(configuration: core.configuration)
        let endpoints = EndpointTable.endpoints(core: core, addresses: addresses)
        let console =
            core.configuration.consoleEnabled
            ? ConsoleController(core: core, addresses: addresses).routes().map { method, path, handler in
                Endpoint(method, path, accepts: .none, handler)
            } : []
        let router = Router(context: TesseraRequestContext.self)
        // Added first: Hummingbird wraps each route in the middleware added before it.
        if let tracing = core.configuration.tracing { router.add(middleware: TracingMiddleware(tracing)) }
        router.add(
            middleware: TesseraMiddleware(
                routes: RouteTable(endpoints + console), metrics: core.metrics,
                maximumBodySize: core.configuration.maximumBodySize, rateLimiter: core.rateLimiter,
                addresses: addresses, activity: core.activity))
        for endpoint in endpoints {
            let authenticator = Authenticator(
                accepts: endpoint.accepts, credentials: core.credentials, rateLimiter: core.rateLimiter,
                addresses: addresses, dpop: core.dpop, spendsProof: endpoint.spendsProof, now: core.configuration.now)
            router.on(
                RouterPath(endpoint.path), method: endpoint.method, use: authenticator.responder(for: endpoint.handler))
        }
        // The console authenticates operators itself (a cookie, not an API credential).
        for page in console {
            router.on(RouterPath(page.path), method: page.method, use: page.handler)
        }
        return router
    }
}
