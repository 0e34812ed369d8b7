import HTTPTypes

/// The server's routes as templates, to tell `404 not_found` (no such path) from
/// `405 method_not_allowed` (the path exists, with other methods).
///
/// Made from the one endpoint table the router registers, so it cannot drift from the routes.
struct RouteTable: Sendable {
    private let routes: [(method: HTTPRequest.Method, segments: [Substring])]

    init(_ endpoints: [Endpoint]) {
        routes = endpoints.map { ($0.method, $0.path.split(separator: "/")) }
    }

    /// The methods that the routes matching `path` answer; empty when no route matches.
    func allowedMethods(for path: String) -> [HTTPRequest.Method] {
        let segments = path.split(separator: "/")
        let matching = routes.filter { route in
            route.segments.count == segments.count
                && zip(route.segments, segments).allSatisfy { $0.hasPrefix(":") || $0.utf8.elementsEqual($1.utf8) }
        }
        let specificity = { (route: (method: HTTPRequest.Method, segments: [Substring])) in
            route.segments.map { $0.hasPrefix(":") ? "0" : "1" }.joined()
        }
        guard let best = matching.map(specificity).max() else { return [] }
        var methods: [HTTPRequest.Method] = []
        for route in matching where specificity(route) == best && !methods.contains(route.method) {
            methods.append(route.method)
        }
        return methods
    }
}
